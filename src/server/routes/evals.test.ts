import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { builtinEnvs, EnvRegistry, type AnyEnvironment } from "../../envs/index.js";
import { EvalJob, EvalRollout } from "../../protocol/index.js";
import { calculator, toolUsingModel } from "../../../test/support/eval-envs.js";
import { reverseLastUser, startScriptedModel, type ScriptedModelServer, type ScriptedPolicy } from "../../../test/support/scripted-model.js";
import { createApp } from "../app.js";
import type { ServerConfig } from "../context.js";
import { openNodeDatabase, type NodeDatabase } from "../db/node-sqlite.js";

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()?.();
});

async function model(policy: ScriptedPolicy): Promise<ScriptedModelServer> {
  const server = await startScriptedModel(policy);
  cleanup.push(() => server.close());
  return server;
}

const slow = (ms: number): ScriptedPolicy => async (req, n) => {
  await new Promise((r) => setTimeout(r, ms));
  return reverseLastUser(req, n);
};

/** A whole app on a SQLite file, started like `edgegym serve` starts it (evals.start()). */
function server(opts: { dbPath?: string; config?: Partial<ServerConfig>; envs?: AnyEnvironment[]; start?: boolean } = {}) {
  const database: NodeDatabase = openNodeDatabase(opts.dbPath ?? ":memory:");
  const built = createApp({ db: database.db, registry: new EnvRegistry("node", opts.envs ?? [...builtinEnvs, calculator]), config: { evalApiKey: "sk-secret-123", ...opts.config } });
  if (opts.start !== false) built.evals.start(200);
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await built.evals.stop();
    database.close();
  };
  cleanup.push(close);
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await built.app.request(path, { method, ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { "content-type": "application/json" } }) });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return { status: res.status, headers: res.headers, text, json: json as any };
  };
  const waitFor = async (id: string, done: (job: EvalJob) => boolean, timeoutMs = 20_000): Promise<EvalJob> => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const job = (await call("GET", `/v1/evals/${id}`)).json as EvalJob;
      if (done(job)) return job;
      if (Date.now() > until) throw new Error(`timed out waiting on ${id}: ${JSON.stringify(job)}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  return { ...built, call, waitFor, close };
}

function tempDb(): string {
  const dir = mkdtempSync(join(tmpdir(), "edgegym-evaljobs-"));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, "edgegym.db");
}

describe("POST /v1/evals", () => {
  it("is off (503) until the server has a model endpoint", async () => {
    const { call } = server();
    const res = await call("POST", "/v1/evals", { env_id: "reverse-text", model: "m" });
    expect([res.status, res.json.error.code]).toEqual([503, "service_unavailable"]);
    expect(res.json.error.message).toMatch(/EDGEGYM_EVAL_BASE_URL/);
  });

  it("runs a job to the end, stores every rollout, and never shows the endpoint's key", async () => {
    const m = await model(reverseLastUser);
    const { call, waitFor } = server({ config: { evalBaseUrl: m.baseUrl, evalModel: "default-model" } });
    const created = await call("POST", "/v1/evals", { env_id: "reverse-text", num_examples: 4, rollouts_per_example: 2, max_tokens: 64 });
    expect(created.status).toBe(201);
    expect(EvalJob.parse(created.json)).toMatchObject({ env_id: "reverse-text", model: "default-model", request: { num_examples: 4, split: "eval", max_concurrent: 32 } });
    const job = await waitFor(created.json.eval_id, (j) => j.status === "completed");
    expect(job.progress).toMatchObject({ total: 8, done: 8, errors: 0, mean_reward: expect.closeTo(1.2, 10) });
    expect(job.summary).toMatchObject({ rollouts: 8, pass_at_k: { "1": 1, "2": 1 }, stop_conditions: { single_turn: 8 } });
    expect(job.finished_at).not.toBeNull();
    expect(m.authorizations.every((a) => a === "Bearer sk-secret-123")).toBe(true);
    expect(m.requests.every((r) => r.model === "default-model" && r.max_tokens === 64)).toBe(true);

    const results = await call("GET", `/v1/evals/${job.eval_id}/results`);
    expect(results.headers.get("content-type")).toMatch(/application\/x-ndjson/);
    const rows = results.text.trim().split("\n").map((l) => EvalRollout.parse(JSON.parse(l)));
    expect(rows.map((r) => [r.example_id, r.rollout_index])).toEqual([[0, 0], [0, 1], [1, 0], [1, 1], [2, 0], [2, 1], [3, 0], [3, 1]]);
    const page = await call("GET", `/v1/evals/${job.eval_id}/results?offset=2&limit=3`);
    expect(page.text.trim().split("\n").map((l) => JSON.parse(l).example_id)).toEqual([1, 1, 2]);

    const listed = await call("GET", "/v1/evals?status=completed");
    expect(listed.json.evals.map((j: EvalJob) => j.eval_id)).toEqual([job.eval_id]);
    for (const res of [created, listed, results, await call("GET", `/v1/evals/${job.eval_id}`)]) {
      expect(res.text).not.toContain("sk-secret-123");
      expect(res.text).not.toContain(m.baseUrl);
    }
  });

  it("runs a tool environment's full loop", async () => {
    const m = await model(toolUsingModel);
    const { call, waitFor } = server({ config: { evalBaseUrl: m.baseUrl } });
    const created = await call("POST", "/v1/evals", { env_id: "calculator", model: "m", num_examples: -1, rollouts_per_example: 1 });
    const job = await waitFor(created.json.eval_id, (j) => j.status === "completed");
    expect(job.summary).toMatchObject({ rollouts: 3, reward: { mean: 1 }, stop_conditions: { no_tool_calls: 3 }, metrics: { tool_calls: 2 } });
  });

  it("validates: unknown fields (a key or URL sent by the client), unknown env, bad args, a model name", async () => {
    const m = await model(reverseLastUser);
    const { call } = server({ config: { evalBaseUrl: m.baseUrl } });
    const withKey = await call("POST", "/v1/evals", { env_id: "reverse-text", model: "m", api_key: "x", base_url: "http://evil" });
    expect([withKey.status, withKey.json.error.code]).toEqual([400, "invalid_request"]);
    expect((await call("POST", "/v1/evals", { env_id: "nope", model: "m" })).json.error.code).toBe("env_not_found");
    expect((await call("POST", "/v1/evals", { env_id: "reverse-text", model: "m", env_args: { x: 1 } })).json.error.code).toBe("invalid_env_args");
    expect((await call("POST", "/v1/evals", { env_id: "reverse-text" })).json.error.message).toMatch(/name a `model`/);
    expect((await call("GET", "/v1/evals/ev_missing")).json.error.code).toBe("eval_not_found");
  });

  it("answers 429 with Retry-After past the server's concurrent model request limit", async () => {
    const m = await model(slow(300));
    const { call, waitFor } = server({ config: { evalBaseUrl: m.baseUrl, evalMaxConcurrentRequests: 4, evalRetryAfterSeconds: 7 } });
    const first = await call("POST", "/v1/evals", { env_id: "reverse-text", model: "m", num_examples: 2, rollouts_per_example: 2, max_concurrent: 3 });
    expect(first.status).toBe(201);
    const second = await call("POST", "/v1/evals", { env_id: "reverse-text", model: "m", num_examples: 2, rollouts_per_example: 2, max_concurrent: 2 });
    expect([second.status, second.json.error.code, second.headers.get("retry-after")]).toEqual([429, "rate_limited", "7"]);
    expect(second.json.error.details).toEqual({ limit: 4, in_use: 3, requested: 2 });
    const fits = await call("POST", "/v1/evals", { env_id: "reverse-text", model: "m", num_examples: 1, rollouts_per_example: 1, max_concurrent: 8 });
    expect(fits.status).toBe(201); // one rollout needs one slot, whatever max_concurrent says
    const never = await call("POST", "/v1/evals", { env_id: "reverse-text", model: "m", num_examples: 5, max_concurrent: 5 });
    expect([never.status, never.json.error.code]).toEqual([400, "invalid_request"]);
    await waitFor(first.json.eval_id, (j) => j.status === "completed");
    await waitFor(fits.json.eval_id, (j) => j.status === "completed");
    expect((await call("POST", "/v1/evals", { env_id: "reverse-text", model: "m", num_examples: 2, rollouts_per_example: 2, max_concurrent: 2 })).status).toBe(201);
  });

  it("streams progress as server-sent events and ends with the finished job", async () => {
    const m = await model(slow(40));
    const { app, call } = server({ config: { evalBaseUrl: m.baseUrl } });
    const created = await call("POST", "/v1/evals", { env_id: "reverse-text", model: "m", num_examples: 3, rollouts_per_example: 2, max_concurrent: 1 });
    const res = await app.request(`/v1/evals/${created.json.eval_id}/events`);
    expect(res.headers.get("content-type")).toMatch(/text\/event-stream/);
    const text = await res.text();
    const events = text
      .split("\n\n")
      .filter((block) => block.includes("data:"))
      .map((block) => ({ event: /event: (\w+)/.exec(block)?.[1], data: JSON.parse(/data: (.*)/.exec(block)?.[1] ?? "null") }));
    const progress = events.filter((e) => e.event === "progress").map((e) => e.data.progress.done as number);
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect([...progress].sort((a, b) => a - b)).toEqual(progress);
    expect(events.at(-1)?.event).toBe("done");
    expect(events.at(-1)?.data).toMatchObject({ status: "completed", progress: { done: 6 } });
    expect((await app.request("/v1/evals/ev_nope/events")).status).toBe(404);
  });

  it("cancels a running job, keeping what it stored", async () => {
    const m = await model(slow(100));
    const { call, waitFor } = server({ config: { evalBaseUrl: m.baseUrl } });
    const created = await call("POST", "/v1/evals", { env_id: "reverse-text", model: "m", num_examples: 20, rollouts_per_example: 1, max_concurrent: 1 });
    await waitFor(created.json.eval_id, (j) => j.progress.done >= 2);
    const cancelled = await call("POST", `/v1/evals/${created.json.eval_id}/cancel`);
    expect(cancelled.json.status).toBe("cancelled");
    const stored = cancelled.json.progress.done as number;
    expect(stored).toBeGreaterThanOrEqual(2);
    expect(stored).toBeLessThan(20);
    expect(cancelled.json.summary.rollouts).toBe(stored);
    await new Promise((r) => setTimeout(r, 250));
    expect((await call("GET", `/v1/evals/${created.json.eval_id}`)).json.progress.done).toBe(stored);
    expect((await call("POST", `/v1/evals/${created.json.eval_id}/cancel`)).json.status).toBe("cancelled");
  });
});

describe("eval jobs across a restart", () => {
  it("a job interrupted by a shutdown resumes on the next start without redoing or losing rollouts", async () => {
    const m = await model(slow(60));
    const dbPath = tempDb();
    const first = server({ dbPath, config: { evalBaseUrl: m.baseUrl } });
    const created = await first.call("POST", "/v1/evals", { env_id: "reverse-text", model: "m", num_examples: 8, rollouts_per_example: 1, max_concurrent: 2 });
    const id = created.json.eval_id as string;
    await first.waitFor(id, (j) => j.progress.done >= 3);
    await first.close();

    // Read what the shutdown left before the second server's runner picks the job up,
    // or a busy machine lets it store rollouts first and the count below is off.
    const second = server({ dbPath, config: { evalBaseUrl: m.baseUrl }, start: false });
    const before = (await second.call("GET", `/v1/evals/${id}`)).json as EvalJob;
    expect(before.status).toBe("running");
    // Requests the first server had in flight may reach the model server after the
    // shutdown returned: let them land before counting what the second one sends.
    await new Promise((r) => setTimeout(r, 200));
    const requestsAtStop = m.requests.length;
    second.evals.start(200);
    const job = await second.waitFor(id, (j) => j.status === "completed");
    expect(job.progress).toMatchObject({ total: 8, done: 8, errors: 0 });
    const rows = (await second.call("GET", `/v1/evals/${id}/results`)).text.trim().split("\n").map((l) => JSON.parse(l));
    expect(rows.map((r) => r.example_id)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    // Only the rollouts not stored before the shutdown ran again (in-flight ones rerun).
    expect(m.requests.length - requestsAtStop).toBe(8 - before.progress.done);
  });

  it("a job whose environment is gone after the restart is marked failed, its rollouts kept", async () => {
    const m = await model(slow(60));
    const dbPath = tempDb();
    const first = server({ dbPath, config: { evalBaseUrl: m.baseUrl } });
    const created = await first.call("POST", "/v1/evals", { env_id: "calculator", model: "m", num_examples: 3, rollouts_per_example: 4, max_concurrent: 1 });
    await first.waitFor(created.json.eval_id, (j) => j.progress.done >= 1);
    await first.close();
    const second = server({ dbPath, config: { evalBaseUrl: m.baseUrl }, envs: builtinEnvs });
    const job = await second.waitFor(created.json.eval_id, (j) => j.status === "failed");
    expect(job.error).toMatch(/environment "calculator" is not served here/);
    expect(job.progress.done).toBeGreaterThanOrEqual(1);
  });
});
