import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { builtinEnvs, EnvRegistry } from "../../envs/index.js";
import { EvalRequest, EvalRollout } from "../../protocol/index.js";
import { calculator } from "../../../test/support/eval-envs.js";
import { reverseLastUser, startScriptedModel, type ScriptedModelServer, type ScriptedPolicy } from "../../../test/support/scripted-model.js";
import { evalToDir, type EvalToDirOptions } from "./eval-to-dir.js";
import { formatReport } from "./report.js";
import { METADATA_FILE, prepareResume, readMetadata, readResults, RESULTS_FILE, TRACES_FILE } from "./run-dir.js";

const registry = new EnvRegistry("node", [...builtinEnvs, calculator]);
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()?.();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "edgegym-eval-"));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function model(policy: ScriptedPolicy): Promise<ScriptedModelServer> {
  const server = await startScriptedModel(policy);
  cleanup.push(() => server.close());
  return server;
}

function options(server: ScriptedModelServer, outputBase: string, request: Partial<EvalRequest>, extra: Partial<EvalToDirOptions> = {}): EvalToDirOptions {
  return {
    request: { ...EvalRequest.parse({ env_id: "reverse-text", num_examples: 3, rollouts_per_example: 2, max_concurrent: 4, ...request }), model: "org/scripted" },
    baseUrl: server.baseUrl,
    registry,
    outputBase,
    retryBaseDelayMs: 1,
    ...extra,
  };
}

const keyOf = (r: EvalRollout) => `${r.example_id}:${r.rollout_index}`;

describe("edgegym eval output", () => {
  it("writes results.jsonl and metadata.json where vf-eval does, with its field names", async () => {
    const server = await model(reverseLastUser);
    const base = tempDir();
    const result = await evalToDir(options(server, base, { max_tokens: 32, temperature: 0.5, sampling_args: { top_p: 0.9 } }));
    expect(result.runDir).toMatch(new RegExp(`^${base}/evals/reverse-text--org--scripted/[0-9a-f]{8}$`));
    const { rows } = await readResults(join(result.runDir, RESULTS_FILE));
    expect(rows).toHaveLength(6);
    for (const row of rows) {
      // edgegym's fields, plus verifiers 0.3's nested timing (seconds) beside the flat *_ms.
      const { timing, ...rest } = row as EvalRollout & { timing: Record<string, unknown> };
      EvalRollout.parse({ ...rest, timing: { start_time: timing.start_time, generation_ms: timing.generation_ms, env_ms: timing.env_ms, scoring_ms: timing.scoring_ms, total_ms: timing.total_ms } });
      expect(timing).toMatchObject({ setup: { duration: expect.any(Number) }, generation: { duration: expect.any(Number) }, model: { spans: [expect.any(Object)] }, env: { spans: [expect.any(Object)] } });
      expect(timing.total as number).toBeGreaterThan(0);
      expect((timing.model as { duration: number }).duration * 1000).toBeCloseTo(timing.generation_ms as number, 0);
    }
    const meta = await readMetadata(result.runDir);
    expect(meta).toMatchObject({
      env_id: "reverse-text",
      model: "org/scripted",
      base_url: server.baseUrl,
      num_examples: 3,
      rollouts_per_example: 2,
      sampling_args: { top_p: 0.9, max_tokens: 32, temperature: 0.5 },
      avg_reward: expect.closeTo(1.2, 10),
      avg_metrics: { lcs_ratio: 1, format: 1, turns: 1 },
      avg_error: 0,
      pass_at_k: { "1": 1, "2": 1 },
      status: "completed",
      split: "eval",
      driver: "in-process",
      completed_rollouts: 6,
    });
    expect(typeof meta.date).toBe("string");
    expect(meta.time_ms).toBeGreaterThan(0);
    expect(meta.usage?.input_tokens).toBeGreaterThan(0);
    const report = formatReport(result.summary, { envId: "reverse-text", model: "org/scripted", numExamples: 3, rolloutsPerExample: 2, driver: "in-process", runDir: result.runDir });
    for (const part of ["reward       mean 1.200", "lcs_ratio", "pass@1 1.000", "stop reasons single_turn 6", "errors       0/6", "tokens", "generation", "reward histogram"]) expect(report).toContain(part);
  });

  it("records failed rollouts, then --resume reruns only those and the ones never run", async () => {
    const base = tempDir();
    let failing = true;
    const server = await model((req, n) => (failing && n % 3 === 0 ? { status: 503 } : reverseLastUser(req, n)));
    const first = await evalToDir(options(server, base, { max_retries: 0, max_concurrent: 1 }));
    const before = (await readResults<EvalRollout>(join(first.runDir, RESULTS_FILE))).rows;
    const failed = before.filter((r) => r.error);
    expect(failed.length).toBe(2);
    expect(failed.every((r) => r.error?.error === "model_server_error" && r.reward === 0)).toBe(true);
    expect(first.summary).toMatchObject({ rollouts: 6, errors: 2 });

    failing = false;
    const requestsBefore = server.requests.length;
    const second = await evalToDir(options(server, base, { max_retries: 0 }, { resume: first.runDir }));
    expect(second.runDir).toBe(first.runDir);
    expect(second.ranNow).toBe(2);
    expect(server.requests.length - requestsBefore).toBe(2);
    const after = (await readResults<EvalRollout>(join(first.runDir, RESULTS_FILE))).rows;
    expect(after).toHaveLength(6);
    expect(new Set(after.map(keyOf)).size).toBe(6);
    expect(after.every((r) => r.error === null)).toBe(true);
    expect(second.metadata).toMatchObject({ status: "completed", completed_rollouts: 6, avg_error: 0 });
  });

  it("stops on abort keeping every finished rollout, and --resume finds the run and finishes it", async () => {
    const base = tempDir();
    const controller = new AbortController();
    let answered = 0;
    const server = await model(async (req, n) => {
      if (++answered > 4) await new Promise((r) => setTimeout(r, 300));
      return reverseLastUser(req, n);
    });
    const first = await evalToDir(
      options(server, base, { num_examples: 4, max_concurrent: 2 }, {
        signal: controller.signal,
        display: { start: () => {}, log: () => {}, stop: () => {}, update: (f) => f.done >= 4 && controller.abort() },
      }),
    );
    expect(first.status).toBe("interrupted");
    const saved = (await readResults<EvalRollout>(join(first.runDir, RESULTS_FILE))).rows;
    expect(saved.length).toBeGreaterThanOrEqual(4);
    expect(saved.length).toBeLessThan(8);
    expect((await readMetadata(first.runDir)).status).toBe("interrupted");
    // A crash mid-append leaves half a line: resume drops it.
    appendFileSync(join(first.runDir, RESULTS_FILE), '{"example_id": 3, "rollout_in');

    const notes: string[] = [];
    const second = await evalToDir(options(server, base, { num_examples: 4, max_concurrent: 2 }, { resume: true, note: (l) => notes.push(l) }));
    expect(second.runDir).toBe(first.runDir);
    expect(notes.join("\n")).toMatch(/half-written line dropped/);
    expect(second.ranNow).toBe(8 - saved.length);
    const rows = (await readResults<EvalRollout>(join(first.runDir, RESULTS_FILE))).rows;
    expect(rows).toHaveLength(8);
    expect(new Set(rows.map(keyOf)).size).toBe(8);
    expect(second.metadata.status).toBe("completed");
    expect(second.metadata.time_ms).toBeGreaterThan(first.metadata.time_ms);
  });

  it("writes metadata.json with verifiers 0.3.1's keys (time in seconds) and keeps a vf-eval run's keys on resume", async () => {
    const base = tempDir();
    const server = await model(reverseLastUser);
    const first = await evalToDir(options(server, base, { num_examples: 1, rollouts_per_example: 2 }));
    const own = JSON.parse(readFileSync(join(first.runDir, METADATA_FILE), "utf8")) as Record<string, unknown> & { time: number; time_ms: number };
    expect(own).toMatchObject({ shuffle: false, shuffle_seed: null });
    expect(own.time).toBeCloseTo(own.time_ms / 1000, 9);
    // What vf-eval 0.3.1's save_metadata writes (no date, no time_ms, no split or seed), with its optional `cost`.
    const vf = {
      env_id: "reverse-text", env_args: {}, model: "org/scripted", base_url: "http://elsewhere/v1", num_examples: 1, rollouts_per_example: 2,
      shuffle: false, shuffle_seed: null, sampling_args: {}, time: 12.5, avg_reward: 1.2, avg_metrics: {}, avg_error: 0, pass_at_k: {}, pass_all_k: {},
      pass_threshold: 0.5, usage: { input_tokens: 10, output_tokens: 5 }, cost: { input_usd: 0.1, output_usd: 0.2, total_usd: 0.3 },
      version_info: { vf_version: "0.3.1", vf_commit: null, env_version: "0.1.0", env_commit: null }, state_columns: [], tools: null,
    };
    writeFileSync(join(first.runDir, METADATA_FILE), JSON.stringify(vf));
    const second = await evalToDir(options(server, base, { num_examples: 2, rollouts_per_example: 2 }, { resume: first.runDir }));
    expect(second.ranNow).toBe(2);
    const meta = JSON.parse(readFileSync(join(first.runDir, METADATA_FILE), "utf8")) as Record<string, unknown> & { time: number; time_ms: number };
    for (const key of Object.keys(vf)) expect(meta, key).toHaveProperty(key);
    expect(meta).toMatchObject({ cost: vf.cost, version_info: { vf_version: "0.3.1", vf_commit: null, env_commit: null }, num_examples: 2, completed_rollouts: 4 });
    expect(meta.time).toBeGreaterThan(12.5);
    expect(meta.time).toBeCloseTo(meta.time_ms / 1000, 9);
  });

  it("resuming a verifiers 0.4 run, records each row's task as the run did when it is the same prompt", async () => {
    const base = tempDir();
    const server = await model(reverseLastUser);
    const first = await evalToDir(options(server, base, { num_examples: 2, rollouts_per_example: 2 }, { format: "vf04" }));
    const path = join(first.runDir, TRACES_FILE);
    // edgegym's own task records are not carried over (they are made afresh).
    expect((await prepareResume(first.runDir, "reverse-text")).vf04Tasks.size).toBe(0);
    type Line = { task: { type: string; data: Record<string, unknown> & { idx: number }; hash?: string }; traces: { task: unknown; info: Record<string, unknown> }[] };
    const episodes = readFileSync(path, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as Line);
    // One episode per row, as a verifiers taskset records its task: its own class, a field of its own, key and hash.
    // Row 0's task is this environment's row 0; row 1's has another prompt.
    const peer = [0, 1].map((idx) => {
      const ep = episodes.find((e) => e.task.data.idx === idx) as Line;
      const data = idx === 0 ? { ...ep.task.data, text: "row zero" } : { ...ep.task.data, prompt: [{ role: "user", content: "hello" }], text: "hello" };
      const task = { type: "ReverseTask", data, key: `k${idx}`, hash: `h${idx}` };
      return { ...ep, task, traces: ep.traces.map((t) => ({ ...t, task, info: {} })) };
    });
    writeFileSync(path, peer.map((e) => `${JSON.stringify(e)}\n`).join(""));
    const notes: string[] = [];
    const second = await evalToDir(options(server, base, { num_examples: 2, rollouts_per_example: 2 }, { resume: first.runDir, note: (l) => notes.push(l) }));
    expect(second.ranNow).toBe(2);
    const after = readFileSync(path, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as Line);
    expect(after).toHaveLength(4);
    const added = after.slice(2);
    expect(added.find((e) => e.task.data.idx === 0)?.task).toEqual(peer[0]?.task);
    expect(added.find((e) => e.task.data.idx === 0)?.traces[0]?.task).toEqual(peer[0]?.task);
    expect(added.find((e) => e.task.data.idx === 1)?.task).toMatchObject({ type: "EdgegymTask", data: { idx: 1 } });
    expect(added.find((e) => e.task.data.idx === 1)?.task.hash).toBeUndefined();
    expect(notes.join("\n")).toMatch(/row\(s\) 1: the run's episodes record another prompt/);
  });

  it("refuses to resume a run with other settings", async () => {
    const base = tempDir();
    const server = await model(reverseLastUser);
    const first = await evalToDir(options(server, base, { num_examples: 1, rollouts_per_example: 1 }));
    await expect(evalToDir(options(server, base, { num_examples: 1, rollouts_per_example: 2 }, { resume: first.runDir }))).rejects.toThrow(/rollouts per example 1 ≠ 2/);
  });

  it("runs a tool environment through an edgegym server with the same files", async () => {
    const { startNodeServer } = await import("../../server/node/serve.js");
    const edgegym = await startNodeServer({ port: 0, host: "127.0.0.1", dbPath: ":memory:", extraEnvs: [calculator], reapIntervalMs: 0 });
    cleanup.push(() => edgegym.close());
    const { toolUsingModel } = await import("../../../test/support/eval-envs.js");
    const server = await model(toolUsingModel);
    const result = await evalToDir(options(server, tempDir(), { env_id: "calculator", num_examples: -1, rollouts_per_example: 1 }, { server: edgegym.url }));
    expect(result.metadata).toMatchObject({ driver: edgegym.url, split: "train", num_examples: 3, avg_reward: 1, tools: [{ function: { name: "multiply" } }, { function: { name: "add" } }] });
    const { rows } = await readResults<EvalRollout>(join(result.runDir, RESULTS_FILE));
    expect(rows.every((r) => r.tool_defs?.length === 2 && r.completion.some((m) => m.role === "tool"))).toBe(true);
    expect(readFileSync(join(result.runDir, "metadata.json"), "utf8")).not.toContain("api_key");
  });
});
