import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EvalJob } from "../src/protocol/index.js";
import { runCli, type CliRun } from "./support/cli-process.js";
import { reverseLastUser, startScriptedModel, type ScriptedModelServer } from "./support/scripted-model.js";

/** `edgegym serve` killed with SIGKILL mid-job: the restarted server takes the job over when the lease lapses. */
describe("an evaluation job survives a crashed server", () => {
  let model: ScriptedModelServer;
  const dir = mkdtempSync(join(tmpdir(), "edgegym-crash-"));
  const running: CliRun[] = [];
  beforeAll(async () => {
    model = await startScriptedModel(async (req, n) => {
      await new Promise((r) => setTimeout(r, 150));
      return reverseLastUser(req, n);
    });
  });
  afterAll(async () => {
    for (const r of running) r.child.kill("SIGKILL");
    await model.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function serve(): Promise<{ url: string; run: CliRun }> {
    const run = runCli(["serve", "--port", "0", "--db", join(dir, "edgegym.db")], {
      EDGEGYM_EVAL_BASE_URL: model.baseUrl,
      EDGEGYM_EVAL_API_KEY: "sk-x",
      EDGEGYM_EVAL_LEASE_SECONDS: "1",
      EDGEGYM_API_KEYS: "",
    });
    running.push(run);
    const [, url] = (await run.waitForStdout(/listening on (http:\/\/\S+)/)) as [string, string];
    return { url, run };
  }
  const job = async (url: string, id: string): Promise<EvalJob> => (await (await fetch(`${url}/v1/evals/${id}`)).json()) as EvalJob;

  it("resumes after a SIGKILL with every rollout stored once", async () => {
    const first = await serve();
    const created = await fetch(`${first.url}/v1/evals`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ env_id: "reverse-text", model: "m", num_examples: 10, rollouts_per_example: 1, max_concurrent: 2 }),
    });
    expect(created.status).toBe(201);
    const { eval_id: id } = (await created.json()) as EvalJob;
    while ((await job(first.url, id)).progress.done < 3) await new Promise((r) => setTimeout(r, 50));
    first.run.child.kill("SIGKILL");
    await first.run.exit;

    const second = await serve();
    let state = await job(second.url, id);
    expect(state.status).toBe("running");
    const storedAtCrash = state.progress.done;
    const until = Date.now() + 30_000;
    while (state.status !== "completed" && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 100));
      state = await job(second.url, id);
    }
    expect(state).toMatchObject({ status: "completed", progress: { total: 10, done: 10, errors: 0 } });
    expect(storedAtCrash).toBeGreaterThanOrEqual(3);
    const lines = (await (await fetch(`${second.url}/v1/evals/${id}/results`)).text()).trim().split("\n");
    expect(lines.map((l) => JSON.parse(l).example_id)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    second.run.child.kill("SIGTERM");
    expect(await second.run.exit).toBe(0);
  }, 60_000);
});
