import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtinEnvs, EnvRegistry } from "../src/envs/index.js";
import { InProcessDriver } from "../src/eval/in-process-driver.js";
import { evalToDir } from "../src/eval/node/eval-to-dir.js";
import { exportSft } from "../src/eval/node/export-sft-command.js";
import { METADATA_FILE, readMetadata, readResults, readRunRollouts, RESULTS_FILE, TRACES_FILE } from "../src/eval/node/run-dir.js";
import { resolveSplit } from "../src/eval/plan.js";
import type { VfFormat } from "../src/eval/vf-formats.js";
import { contentText, EvalRequest } from "../src/protocol/index.js";
import { calculator, toolUsingModel } from "./support/eval-envs.js";
import { reverseLastUser, startScriptedModel, type ScriptedModelServer } from "./support/scripted-model.js";

/**
 * Each verifiers generation, installed from PyPI (scripts/verifiers-venv.sh: 0.3.1 in
 * trainer-adapter/.venv-vf03, 0.4.0 in .venv-vf04), reads what `edgegym eval --format
 * vf03|vf04` writes with its own loader, and writes runs with its own writer functions that
 * edgegym's `--resume` and `export-sft` then read (test/verifiers/vf_formats.py).
 * Skipped with a note when a venv is missing; failed instead when EDGEGYM_REQUIRE_VERIFIERS=1.
 */
const exec = promisify(execFile);
const root = join(import.meta.dirname, "..");
const script = join(root, "test/verifiers/vf_formats.py");
const python = (gen: VfFormat): string | null => {
  const dir = join(root, `trainer-adapter/.venv-${gen}`);
  if (existsSync(join(dir, ".edgegym-installed"))) return join(dir, "bin/python");
  const why = `verifiers ${gen} venv missing: run bash scripts/verifiers-venv.sh ${gen}`;
  if (process.env.EDGEGYM_REQUIRE_VERIFIERS === "1") throw new Error(why);
  console.warn(`skipping: ${why}`);
  return null;
};
const py03 = python("vf03");
const py04 = python("vf04");

async function vf(py: string, ...args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await exec(py, [script, ...args], { timeout: 120_000, maxBuffer: 16 << 20 });
  return JSON.parse(stdout.trim().split("\n").pop() as string) as Record<string, unknown>;
}

const registry = new EnvRegistry("node", [...builtinEnvs, calculator]);
let base = "";
let reverser: ScriptedModelServer;
let toolUser: ScriptedModelServer;
beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), "edgegym-vf-formats-"));
  reverser = await startScriptedModel(reverseLastUser);
  toolUser = await startScriptedModel(toolUsingModel);
});
afterAll(async () => {
  await reverser?.close();
  await toolUser?.close();
  if (base) rmSync(base, { recursive: true, force: true });
});

function run(envId: string, server: ScriptedModelServer, format: VfFormat | undefined, resume?: string, out = base) {
  return evalToDir({
    request: { ...EvalRequest.parse({ env_id: envId, num_examples: 2, rollouts_per_example: 2, max_concurrent: 2 }), model: "org/scripted" },
    baseUrl: server.baseUrl,
    registry,
    outputBase: out,
    retryBaseDelayMs: 1,
    ...(format ? { format } : {}),
    ...(resume ? { resume } : {}),
  });
}

describe.skipIf(!py03)("verifiers 0.3.1 (vf03: results.jsonl + metadata.json)", () => {
  const py = py03 as string;

  it("loads edgegym's run with its own loader, passes its resume check, and reads the nested timing", { timeout: 180_000 }, async () => {
    for (const [envId, server] of [["reverse-text", reverser], ["calculator", toolUser]] as const) {
      const result = await run(envId, server, "vf03");
      const loaded = await vf(py, "load03", result.runDir, envId, "org/scripted", "2", "2");
      expect(loaded.count).toBe(4);
      expect(loaded.resume_remaining).toBe(0); // vf-eval --resume would run nothing more
      expect(loaded.avg_error).toBe(0);
      expect(loaded.example_ids).toEqual(expect.arrayContaining([0, 0, 1, 1]));
      expect(loaded.avg_reward).toBeCloseTo(result.metadata.avg_reward, 10);
      expect(loaded.pass_at_k).toEqual(result.metadata.pass_at_k);
      // metadata.json has every key 0.3.1's save_metadata writes, each of the kind it writes; `time` in seconds.
      expect(loaded.metadata_missing).toEqual([]);
      expect(loaded.metadata_wrong_type).toEqual([]);
      expect(loaded.metadata_time).toBeCloseTo(result.metadata.time_ms / 1000, 6);
      // verifiers' own print_timing: every phase it knows is there (it skips keys a row lacks).
      for (const key of ["total", "setup", "generation", "model", "env", "scoring", "overhead"]) expect(loaded.timing_printed).toMatch(new RegExp(`\\n  ${key} +min - `));
      if (envId === "calculator") expect((loaded.completion_roles as string[][])[0]).toEqual(["assistant", "tool", "assistant", "tool", "assistant"]);
    }
  });

  it("resumes a run vf-eval 0.3.1 wrote (no split, seed or rollout_index) and export-sft reads it", { timeout: 180_000 }, async () => {
    const dir = join(base, "vfeval03");
    await vf(py, "write03", dir, "reverse-text", "org/scripted");
    const before = readFileSync(join(dir, RESULTS_FILE), "utf8").split("\n").filter(Boolean);
    const vfMeta = JSON.parse(readFileSync(join(dir, METADATA_FILE), "utf8")) as Record<string, unknown>;
    expect(typeof vfMeta.time).toBe("number");
    const sft = await exportSft({ results: dir, minReward: 0.5, bestPerExample: false, format: "jsonl", output: join(base, "sft03.jsonl") });
    expect(sft.report).toMatchObject({ read: 3, kept: 2, failed: 1 });
    expect(sft.rows[0]?.messages.map((m) => m.role)).toEqual(["user", "assistant"]);

    const resumed = await run("reverse-text", reverser, undefined, dir);
    // Row 1's failed rollout runs again, and its missing second one: two, not four.
    expect(resumed.ranNow).toBe(2);
    expect(resumed.status).toBe("completed");
    const after = readFileSync(join(dir, RESULTS_FILE), "utf8").split("\n").filter(Boolean);
    expect(after).toHaveLength(4);
    expect(after.slice(0, 2)).toEqual(before.slice(0, 2)); // vf-eval's good rows, byte for byte
    const { rows } = await readRunRollouts(dir);
    expect(rows.map((r) => `${r.example_id}:${r.rollout_index}`).sort()).toEqual(["0:0", "0:1", "1:0", "1:1"]);
    // …and verifiers reads the resumed run back.
    const loaded = await vf(py, "load03", dir, "reverse-text", "org/scripted", "2", "2");
    expect(loaded.count).toBe(4);
    expect(loaded.resume_remaining).toBe(0);
    expect(loaded.avg_error).toBe(0);
    // The resumed metadata.json keeps every key vf-eval wrote (`time` too, in seconds, grown by this session's time).
    expect(loaded.metadata_missing).toEqual([]);
    const meta = JSON.parse(readFileSync(join(dir, METADATA_FILE), "utf8")) as Record<string, unknown> & { time: number; time_ms: number };
    for (const key of Object.keys(vfMeta)) expect(meta, `key ${key}`).toHaveProperty(key);
    expect(meta.version_info).toMatchObject({ vf_version: (vfMeta.version_info as { vf_version: string }).vf_version });
    expect(meta.time).toBeGreaterThan(vfMeta.time as number);
    expect(meta.time).toBeCloseTo(meta.time_ms / 1000, 6);
  });
});

describe.skipIf(!py04)("verifiers 0.4.0 (vf04: traces.jsonl episodes)", () => {
  const py = py04 as string;

  it("reads edgegym's episodes with its own trace reader: conversation, tools, rewards, timing", { timeout: 180_000 }, async () => {
    for (const [envId, server] of [["reverse-text", reverser], ["calculator", toolUser]] as const) {
      const result = await run(envId, server, "vf04");
      expect(existsSync(join(result.runDir, TRACES_FILE))).toBe(true);
      expect(existsSync(join(result.runDir, RESULTS_FILE))).toBe(false);
      expect((await readMetadata(result.runDir)).format).toBe("vf04");
      const loaded = await vf(py, "load04", result.runDir, "2");
      const episodes = loaded.episodes as { idx: number; ok: boolean; reward: number; roles: string[]; sampled: boolean[]; tool_calls: string[][]; tools: string[]; model_seconds: number; finish: string[] }[];
      expect(episodes).toHaveLength(4);
      // verifiers' own resume planner: every rollout kept, none left to run.
      expect(loaded.resume_keeps).toBe(4);
      expect(loaded.resume_missing).toEqual({ "0": 0, "1": 0 });
      const ours = (await readRunRollouts(result.runDir)).rows;
      for (const [i, ep] of episodes.entries()) {
        const row = ours[i]!;
        expect(ep.idx).toBe(row.example_id);
        expect(ep.ok).toBe(true);
        expect(ep.reward).toBeCloseTo(row.reward, 10);
        expect(ep.roles).toEqual([...row.prompt, ...row.completion].map((m) => m.role));
        expect(ep.finish).toEqual(row.finish_reasons);
        expect(ep.model_seconds * 1000).toBeCloseTo(row.timing.generation_ms, 3);
      }
      if (envId === "calculator") {
        expect(episodes[0]?.tools).toEqual(["multiply", "add"]);
        expect(episodes[0]?.tool_calls).toEqual([["multiply"], ["add"], []]);
      }
    }
  });

  it("resumes a run verifiers 0.4.0 wrote (no metadata.json) and export-sft reads its traces", { timeout: 180_000 }, async () => {
    const dir = join(base, "vfeval04");
    // verifiers' run is of the same rows edgegym's reverse-text has (its own TaskData for them).
    const driver = new InProcessDriver(registry);
    const examples = await driver.examples("reverse-text", resolveSplit(await driver.describe("reverse-text"), undefined), 0, 2);
    const prompts = examples.map((e) => ({ system: contentText(e.prompt[0]?.content), user: contentText(e.prompt[1]?.content) }));
    const { tasks } = await vf(py, "write04", dir, "reverse-text", "org/scripted", JSON.stringify(prompts));
    // The taskset's rows as verifiers has them (its own TaskData, hashed on its own fields): what vf-eval --resume plans against.
    const tasksFile = join(base, "vfeval04-tasks.json");
    writeFileSync(tasksFile, JSON.stringify(tasks));
    const vfTasks = readFileSync(join(dir, TRACES_FILE), "utf8").split("\n").filter(Boolean).map((l) => (JSON.parse(l) as { task: { data: { idx: number } } }).task);
    // verifiers' own planner on its own run: row 1 (failed) needs both its rollouts again.
    expect((await vf(py, "load04", dir, "2", tasksFile)).resume_missing).toEqual({ "0": 0, "1": 2 });
    const sft = await exportSft({ results: dir, minReward: 0.5, bestPerExample: false, format: "jsonl", output: join(base, "sft04.jsonl") });
    expect(sft.report).toMatchObject({ read: 3, kept: 1, failed: 1, belowMinReward: 1 });
    expect(sft.rows[0]?.messages).toEqual([
      { role: "system", content: prompts[0]?.system },
      { role: "user", content: prompts[0]?.user },
      { role: "assistant", content: `<answer>${[...(prompts[0]?.user ?? "")].reverse().join("")}</answer>` },
    ]);

    const resumed = await run("reverse-text", reverser, undefined, dir);
    expect(resumed.ranNow).toBe(2);
    const { rows } = await readResults<Record<string, unknown>>(join(dir, TRACES_FILE));
    expect(rows).toHaveLength(4);
    // verifiers' own planner, given the taskset's rows, counts all four done and owes nothing…
    const written = await vf(py, "load04", dir, "2", tasksFile);
    expect(written.resume_missing).toEqual({ "0": 0, "1": 0 });
    expect((written.episodes as unknown[]).length).toBe(4);
    expect(written.resume_keeps).toBe(4);
    // …because the episodes edgegym added record their row's task as verifiers did (type, data, key, hash).
    for (const row of rows) {
      const task = (row as { task: { data: { idx: number } } }).task;
      expect(task).toEqual(vfTasks.find((t) => t.data.idx === task.data.idx));
    }
  });

  it("will not resume a vf04 run as vf03", async () => {
    await expect(run("reverse-text", reverser, "vf03", join(base, "vfeval04"))).rejects.toThrow(/holds vf04 files/);
  });
});
