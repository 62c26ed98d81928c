import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HttpDriver } from "../src/eval/http-driver.js";
import { OpenAIChatModel } from "../src/eval/openai-model.js";
import { SummaryBuilder } from "../src/eval/stats.js";
import { startNodeServer, type RunningServer } from "../src/server/node/serve.js";
import { databaseLabel } from "../src/server/node/harbor.js";
import { containersWith, dockerReady } from "./support/docker.js";
import { REPO_ROOT } from "./support/node-server.js";
import { runRollouts } from "./support/eval-run.js";
import { startScriptedModel, type ScriptedModelServer, type ScriptedRequest } from "./support/scripted-model.js";

/*
 * An evaluation of Harbor tasks (`edgegym eval harbor --server URL` drives the same
 * runner over HTTP): a model that works in the container with the bash tool, then stops.
 * Solved tasks score 1; a task whose tests overrun their time limit is counted as an
 * error (score_failed:verifier_timeout), apart from the rewards.
 */

const FIXTURES = join(REPO_ROOT, "test/fixtures/harbor-tasks");
const ready = dockerReady();

/** The commands a capable agent would run for each task, then a final message. */
const SOLUTIONS: Record<string, string> = {
  "count-errors": "grep -cE '^[^ ]+ ERROR ' /var/log/service/service.log > /app/answer.txt",
  "slow-verifier": "echo done > /app/done.txt",
};

function agent(request: ScriptedRequest) {
  const last = request.messages.at(-1);
  if (last?.role === "tool") return { content: "Done." };
  const task = Object.keys(SOLUTIONS).find((name) => request.messages.some((m) => m.role === "user" && typeof m.content === "string" && m.content.includes(name === "count-errors" ? "ERROR" : "done.txt")));
  return { content: "", tool_calls: [{ id: "call_1", type: "function" as const, function: { name: "bash", arguments: JSON.stringify({ command: SOLUTIONS[task ?? "count-errors"] }) } }] };
}

describe.skipIf(!ready)("an evaluation of Harbor tasks over HTTP", () => {
  let dir: string;
  let server: RunningServer;
  let model: ScriptedModelServer;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "edgegym-harbor-eval-"));
    server = await startNodeServer({ port: 0, host: "127.0.0.1", dbPath: join(dir, "edgegym.db"), reapIntervalMs: 0, harborDirs: [FIXTURES] });
    model = await startScriptedModel(agent);
  }, 120_000);
  afterAll(async () => {
    await model?.close();
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("scores solved tasks 1, counts an overrunning verifier as an error, and leaves no container", async () => {
    const driver = new HttpDriver({ baseUrl: server.url, retry: { maxRetries: 0 } });
    const chat = new OpenAIChatModel({ model: "scripted", baseUrl: model.baseUrl, timeoutMs: 30_000 });
    const tasks = ["count-errors", "slow-verifier"];
    const examples = await driver.examples("harbor", "train", 0, 5);
    const specs = tasks.map((name, i) => ({ example: examples.find((e) => String(e.info?.task).endsWith(name)) as (typeof examples)[number], rolloutIndex: 0, seed: i }));
    const rows = await runRollouts({ envId: "harbor", driver, model: chat, specs, concurrency: 2 });
    const byTask = Object.fromEntries(rows.map((r) => [String(r.info?.task).split("/").pop(), r]));
    expect(byTask["count-errors"]).toMatchObject({ reward: 1, error: null });
    expect(byTask["slow-verifier"]?.error).toMatchObject({ error: "score_failed:verifier_timeout" });
    const summary = new SummaryBuilder(0.5, 1);
    for (const row of rows) summary.add(row);
    expect(summary.errorCount).toBe(1);
    expect(containersWith(`edgegym.db=${databaseLabel(join(dir, "edgegym.db"))}`)).toEqual([]);
  }, 240_000);
});
