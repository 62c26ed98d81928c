import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EvalRollout } from "../src/protocol/index.js";
import { freePort, startChildServer } from "./support/child-server.js";
import { runCli, type CliRun } from "./support/cli-process.js";
import { containersWith, dockerReady } from "./support/docker.js";
import { REPO_ROOT } from "./support/node-server.js";
import { startScriptedModel, type ScriptedModelServer, type ScriptedRequest } from "./support/scripted-model.js";

/*
 * `edgegym eval harbor --env harbor:DIR` with no --server: the CLI serves the tasks on this
 * machine's Docker itself (a server private to the run), a scripted model works in each
 * container with bash, and when the run ends, however it ends, no container of the run is
 * left. The same from the config file's `envs`, whose relative DIR is the file's.
 */

const FIXTURES = join(REPO_ROOT, "test/fixtures/harbor-tasks");
const ready = dockerReady();

/** What a capable agent runs for each task (by a phrase of its instruction); wrong-oracle gets the oracle's wrong answer. */
const COMMANDS: [string, string][] = [
  // The pids limit printed too: the config file's sandbox_pids must reach the box.
  ["ERROR", "grep -cE '^[^ ]+ ERROR ' /var/log/service/service.log > /app/answer.txt; cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max"],
  ["done.txt", "echo done > /app/done.txt"],
  ["17 × 23", "echo 381 > /app/answer.txt"],
];

function agent(request: ScriptedRequest) {
  if (request.messages.at(-1)?.role === "tool") return { content: "Done." };
  const instruction = request.messages.filter((m) => m.role === "user").map((m) => (typeof m.content === "string" ? m.content : "")).join("\n");
  const command = COMMANDS.find(([phrase]) => instruction.includes(phrase))?.[1] ?? "true";
  return { content: "", tool_calls: [{ id: "call_1", type: "function" as const, function: { name: "bash", arguments: JSON.stringify({ command }) } }] };
}

/** The `edgegym.db` label the run printed at its start. */
async function runLabel(run: CliRun): Promise<string> {
  await run.waitForStderr(/labelled edgegym\.db=[0-9a-f]+/, 1, 120_000);
  return (run.stderr().match(/labelled edgegym\.db=([0-9a-f]+)/) as RegExpMatchArray)[1] as string;
}

function rowsOf(out: string): EvalRollout[] {
  const parent = join(out, "evals", "harbor--scripted");
  const [run] = readdirSync(parent);
  return readFileSync(join(parent, run as string, "results.jsonl"), "utf8").trim().split("\n").map((line) => JSON.parse(line) as EvalRollout);
}

const byTask = (rows: EvalRollout[]): Record<string, EvalRollout> => Object.fromEntries(rows.map((r) => [String(r.info?.task).split("/").pop(), r]));

async function until(check: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe.skipIf(!ready)("edgegym eval on Harbor tasks in the CLI's own process (Docker)", () => {
  let dir: string;
  let model: ScriptedModelServer;
  let hanging: ScriptedModelServer;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "edgegym-harbor-local-"));
    for (const task of ["count-errors", "slow-verifier", "wrong-oracle"]) cpSync(join(FIXTURES, task), join(dir, "tasks", task), { recursive: true });
    cpSync(join(FIXTURES, "count-errors"), join(dir, "one", "count-errors"), { recursive: true });
    model = await startScriptedModel(agent);
    // A model that never answers: the run is stopped while its episode holds a container.
    hanging = await startScriptedModel(() => ({ hang: true }));
  }, 60_000);
  afterAll(async () => {
    await model?.close();
    await hanging?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("--env harbor:DIR: solved tasks score 1, a wrong answer 0, an overrunning verifier is an error; stdout is the report; no container is left", async () => {
    const out = join(dir, "out-flags");
    const run = runCli(["eval", "harbor", "--env", `harbor:${join(dir, "tasks")}`, "-m", "scripted", "-b", model.baseUrl, "-n", "3", "-r", "1", "-c", "3", "-o", out]);
    const label = await runLabel(run);
    expect(await run.exit, run.stderr()).toBe(0);
    const rows = byTask(rowsOf(out));
    expect(Object.keys(rows).sort()).toEqual(["count-errors", "slow-verifier", "wrong-oracle"]);
    expect(rows["count-errors"]).toMatchObject({ reward: 1, error: null });
    expect(rows["wrong-oracle"]).toMatchObject({ reward: 0, error: null });
    expect(rows["slow-verifier"]?.error).toMatchObject({ error: "score_failed:verifier_timeout" });
    expect(run.stdout()).toMatch(/^harbor · scripted · 3 rollouts \(3 examples × 1\) · in-process · /m);
    expect(run.stdout()).not.toMatch(/python sandbox|listening/);
    expect(containersWith(`edgegym.db=${label}`)).toEqual([]);
  }, 300_000);

  it("the config file's envs: harbor:DIR relative to the file, read by eval (its sandbox settings applied) and by serve", async () => {
    const out = join(dir, "out-config");
    mkdirSync(join(dir, "conf"), { recursive: true });
    const config = join(dir, "conf", "edgegym.json");
    writeFileSync(config, JSON.stringify({ envs: ["harbor:../one"], sandbox_pids: 300 }));
    // The working directory is the repository's: `../one` resolves only against the file's directory.
    const run = runCli(["eval", "harbor", "-m", "scripted", "-b", model.baseUrl, "-n", "1", "-r", "1", "-o", out], { EDGEGYM_CONFIG: config });
    const label = await runLabel(run);
    expect(await run.exit, run.stderr()).toBe(0);
    const [row] = rowsOf(out);
    expect(row).toMatchObject({ reward: 1, error: null });
    const tool = row?.completion.find((m) => m.role === "tool");
    expect(typeof tool?.content === "string" ? tool.content : JSON.stringify(tool?.content)).toMatch(/^300$/m);
    expect(containersWith(`edgegym.db=${label}`)).toEqual([]);

    // `edgegym serve` reads the same list: its harbor serves the task the file names.
    const port = await freePort();
    const server = await startChildServer({
      command: process.execPath,
      args: ["--import", "tsx", "src/server/node/cli.ts", "serve", "--port", String(port), "--db", ":memory:"],
      env: { EDGEGYM_CONFIG: config, EDGEGYM_REAP_INTERVAL_SECONDS: "0" },
      healthUrl: `http://127.0.0.1:${port}/health`,
      startTimeoutMs: 60_000,
    });
    try {
      const page = (await (await fetch(`http://127.0.0.1:${port}/v1/envs/harbor/examples?split=train&offset=0&limit=10`)).json()) as { examples: { info?: { task?: string } }[] };
      expect(page.examples.map((e) => e.info?.task)).toEqual(["edgegym/count-errors"]);
    } finally {
      await server.stop();
    }
  }, 300_000);

  it("Ctrl-C and kill, while an episode holds its container: exit 130 / 143 and no container is left", async () => {
    for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
      const run = runCli(["eval", "harbor", "--env", `harbor:${join(dir, "one")}`, "-m", "scripted", "-b", hanging.baseUrl, "-n", "1", "-r", "1", "-o", join(dir, `out-${signal}`)]);
      const label = await runLabel(run);
      await until(() => containersWith(`edgegym.db=${label}`).length > 0, 120_000);
      run.child.kill(signal);
      expect(await run.exit, run.stderr()).toBe(code);
      expect(containersWith(`edgegym.db=${label}`), `${signal}: ${run.stderr()}`).toEqual([]);
    }
  }, 300_000);
});

describe("edgegym eval harbor without its tasks", () => {
  it("says to give them with --env harbor:DIR or --server, before anything starts", async () => {
    const run = runCli(["eval", "harbor", "-m", "scripted", "-b", "http://127.0.0.1:9/v1", "-o", join(tmpdir(), "edgegym-harbor-none")]);
    expect(await run.exit).toBe(1);
    expect(run.stderr()).toMatch(/harbor needs its tasks: --env harbor:DIR .* or --server URL/);
  }, 60_000);
});
