import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { count, eq } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { builtinEnvs, EnvRegistry, type AnyEnvironment } from "../../envs/index.js";
import { EvalDeleteResponse, EvalJob, EvalRequest, EvalRollout, parseEvalStreamEvent } from "../../protocol/index.js";
import { calculator, toolUsingModel } from "../../../test/support/eval-envs.js";
import { reverseLastUser, startScriptedModel, type ScriptedModelServer, type ScriptedPolicy } from "../../../test/support/scripted-model.js";
import { createApp } from "../app.js";
import type { ServerConfig } from "../context.js";
import { sqliteEvalStore } from "../db/eval-store.js";
import { openNodeDatabase, type NodeDatabase } from "../db/node-sqlite.js";
import { evalJobs, evalRollouts, type NewEvalJobRow } from "../db/schema.js";
import { RETENTION_BATCH } from "../evals/eval-service.js";

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
function server(opts: { dbPath?: string; config?: Partial<ServerConfig>; envs?: AnyEnvironment[]; start?: boolean; clock?: () => number } = {}) {
  const database: NodeDatabase = openNodeDatabase(opts.dbPath ?? ":memory:");
  const built = createApp({
    db: database.db,
    registry: new EnvRegistry("node", opts.envs ?? [...builtinEnvs, calculator]),
    config: { evalApiKey: "sk-secret-123", ...opts.config },
    ...(opts.clock ? { clock: opts.clock } : {}),
  });
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
  return { ...built, database, call, waitFor, close };
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

  it("plays a seated environment with its default seats: the model on every client seat, each row naming who played which", async () => {
    // Answers every seat with its lowest free cell (the model sees one seat's conversation at a time).
    const m = await model((req) => {
      const last = [...req.messages].reverse().find((x) => x.role === "user");
      const board = typeof last?.content === "string" ? last.content.split("\n").filter((l) => /^\s*[XO1-9]\s*\|/.test(l)).join(" ") : "";
      return { content: `<move>${board.match(/[1-9]/)?.[0] ?? 1}</move>` };
    });
    const { call, waitFor } = server({ config: { evalBaseUrl: m.baseUrl } });
    const created = await call("POST", "/v1/evals", { env_id: "tic-tac-toe-2p", model: "m", num_examples: 2, rollouts_per_example: 1 });
    expect(created.status, created.text).toBe(201);
    const job = await waitFor(created.json.eval_id, (j) => j.status === "completed");
    expect(job.summary).toMatchObject({ rollouts: 2, errors: 0, stop_conditions: { game_over: 2 } });
    const rows = (await call("GET", `/v1/evals/${job.eval_id}/results`)).text.trim().split("\n").map((l) => JSON.parse(l));
    for (const row of rows) {
      expect(row.seats.x).toMatchObject({ player: "client", metrics: { win: 1 } });
      expect(row.seats.o).toMatchObject({ player: "client", metrics: { loss: 1 } });
      expect(row.reward).toBe(row.seats.x.reward);
    }
    // kuhn-poker's p2 is the environment's nash player by default: the row says so.
    const kuhn = await call("POST", "/v1/evals", { env_id: "kuhn-poker", model: "m", num_examples: 1, rollouts_per_example: 1 });
    const done = await waitFor(kuhn.json.eval_id, (j) => j.status === "completed");
    const [row] = (await call("GET", `/v1/evals/${done.eval_id}/results`)).text.trim().split("\n").map((l) => JSON.parse(l));
    expect(Object.entries(row.seats).map(([seat, s]) => [seat, (s as { player: string }).player])).toEqual([["p1", "client"], ["p2", "nash"]]);
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
      // Every real event must match the documented EvalStreamEvent and the schema its data names.
      .map((block) => parseEvalStreamEvent({ event: /event: (\w+)/.exec(block)?.[1], data: /data: (.*)/.exec(block)?.[1] ?? "", id: /id: (.*)/.exec(block)?.[1] }));
    const progress = events.flatMap((e) => (e.event === "progress" ? [e.data.progress.done] : []));
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

/** Rows left in the database for a job: its job row and its rollouts. */
async function stored(database: NodeDatabase, id: string): Promise<{ jobs: number; rollouts: number }> {
  const [jobs] = await database.db.select({ n: count() }).from(evalJobs).where(eq(evalJobs.id, id));
  const [rollouts] = await database.db.select({ n: count() }).from(evalRollouts).where(eq(evalRollouts.jobId, id));
  return { jobs: jobs?.n ?? -1, rollouts: rollouts?.n ?? -1 };
}

describe("DELETE /v1/evals/{eval_id}", () => {
  it("deletes an ended job with every rollout it stored", async () => {
    const m = await model(reverseLastUser);
    const { call, waitFor, database } = server({ config: { evalBaseUrl: m.baseUrl } });
    const keep = (await call("POST", "/v1/evals", { env_id: "reverse-text", model: "m", num_examples: 2, rollouts_per_example: 1 })).json.eval_id as string;
    const id = (await call("POST", "/v1/evals", { env_id: "reverse-text", model: "m", num_examples: 3, rollouts_per_example: 2 })).json.eval_id as string;
    await waitFor(keep, (j) => j.status === "completed");
    await waitFor(id, (j) => j.status === "completed");
    expect(await stored(database, id)).toEqual({ jobs: 1, rollouts: 6 });

    const deleted = await call("DELETE", `/v1/evals/${id}`);
    expect(deleted.status).toBe(200);
    expect(EvalDeleteResponse.parse(deleted.json)).toEqual({ eval_id: id, deleted: true, rollouts_deleted: 6 });
    expect(await stored(database, id)).toEqual({ jobs: 0, rollouts: 0 });
    for (const path of [`/v1/evals/${id}`, `/v1/evals/${id}/results`, `/v1/evals/${id}/events`]) {
      const res = await call("GET", path);
      expect([res.status, res.json.error.code], path).toEqual([404, "eval_not_found"]);
    }
    expect((await call("GET", "/v1/evals")).json.evals.map((j: EvalJob) => j.eval_id)).toEqual([keep]);
    // The other job is untouched, and a second delete of the same id is 404.
    expect(await stored(database, keep)).toEqual({ jobs: 1, rollouts: 2 });
    const again = await call("DELETE", `/v1/evals/${id}`);
    expect([again.status, again.json.error.code]).toEqual([404, "eval_not_found"]);
  });

  it("refuses a running job with 409 eval_running and loses nothing; after a cancel it deletes", async () => {
    const m = await model(slow(80));
    const { call, waitFor, database } = server({ config: { evalBaseUrl: m.baseUrl } });
    const id = (await call("POST", "/v1/evals", { env_id: "reverse-text", model: "m", num_examples: 20, rollouts_per_example: 1, max_concurrent: 1 })).json.eval_id as string;
    await waitFor(id, (j) => j.progress.done >= 2);
    const refused = await call("DELETE", `/v1/evals/${id}`);
    expect([refused.status, refused.json.error.code]).toEqual([409, "eval_running"]);
    expect(refused.json.error.message).toMatch(/cancel it first/);
    // Still there and still running: it keeps storing rollouts after the refusal.
    const after = await waitFor(id, (j) => j.progress.done >= 3);
    expect(after.status).toBe("running");
    expect((await stored(database, id)).jobs).toBe(1);

    const cancelled = await call("POST", `/v1/evals/${id}/cancel`);
    expect(cancelled.json.status).toBe("cancelled");
    const deleted = await call("DELETE", `/v1/evals/${id}`);
    expect(deleted.json).toEqual({ eval_id: id, deleted: true, rollouts_deleted: cancelled.json.progress.done });
    await new Promise((r) => setTimeout(r, 200));
    expect(await stored(database, id)).toEqual({ jobs: 0, rollouts: 0 });
  });

  it("refuses a queued job with 409 eval_running", async () => {
    const m = await model(reverseLastUser);
    const { call, evals } = server({ config: { evalBaseUrl: m.baseUrl } });
    await evals.stop(); // a stopping server admits the job but runs nothing: it stays queued
    const created = await call("POST", "/v1/evals", { env_id: "reverse-text", model: "m", num_examples: 1 });
    expect(created.json.status).toBe("queued");
    const refused = await call("DELETE", `/v1/evals/${created.json.eval_id}`);
    expect([refused.status, refused.json.error.code]).toEqual([409, "eval_running"]);
    expect((await call("GET", `/v1/evals/${created.json.eval_id}`)).json.status).toBe("queued");
  });

  it("answers 404 eval_not_found for an unknown id", async () => {
    const { call } = server();
    const res = await call("DELETE", "/v1/evals/ev_missing");
    expect([res.status, res.json.error.code]).toEqual([404, "eval_not_found"]);
  });

  it("a rollout that arrives for an ended job is not stored (no orphans after a delete)", async () => {
    const m = await model(reverseLastUser);
    const { call, waitFor, database } = server({ config: { evalBaseUrl: m.baseUrl } });
    const id = (await call("POST", "/v1/evals", { env_id: "reverse-text", model: "m", num_examples: 1, rollouts_per_example: 1 })).json.eval_id as string;
    await waitFor(id, (j) => j.status === "completed");
    const [row] = (await call("GET", `/v1/evals/${id}/results`)).text.trim().split("\n").map((l) => EvalRollout.parse(JSON.parse(l)));
    const store = sqliteEvalStore(database.db);
    // What a runner whose lease lapsed would write late, for a key not stored yet.
    await store.insertRollout(id, { ...(row as EvalRollout), rollout_index: 7 }, Date.now());
    expect((await stored(database, id)).rollouts).toBe(1);
    await call("DELETE", `/v1/evals/${id}`);
    await store.insertRollout(id, row as EvalRollout, Date.now());
    expect(await stored(database, id)).toEqual({ jobs: 0, rollouts: 0 });
  });
});

/** A job row as `POST /v1/evals` stores it once claimed. */
function jobRow(id: string, now: number): NewEvalJobRow {
  const request = EvalRequest.parse({ env_id: "reverse-text", model: "m", num_examples: 1, rollouts_per_example: 2, split: "eval" });
  return {
    id, envId: "reverse-text", envVersion: "1", model: "m", status: "running", request, split: "eval", numExamples: 1, totalRollouts: 2,
    summary: null, error: null, cancelRequested: false, leaseOwner: "proc_test", leaseExpiresAt: now + 30_000, runMs: 0,
    createdAt: now, updatedAt: now, startedAt: now, finishedAt: null,
  };
}

function sampleRollouts(n: number): EvalRollout[] {
  return Array.from({ length: n }, (_, i) =>
    EvalRollout.parse({
      example_id: 0, rollout_index: i, task: "reverse-text", prompt: [{ role: "user", content: "abc" }], completion: [{ role: "assistant", content: "cba" }],
      answer: "cba", info: {}, reward: 1, metrics: {}, components: [], stop_condition: "single_turn", is_completed: true, is_truncated: false, finish_reasons: ["stop"], error: null, seed: i, episode_id: null,
      timing: { start_time: 1_790_000_000, generation_ms: 1, env_ms: 1, scoring_ms: 1, total_ms: 3 }, token_usage: { input_tokens: 1, output_tokens: 1 },
    }),
  );
}

describe("eval retention (EDGEGYM_EVAL_RETENTION_DAYS)", () => {
  const DAY = 24 * 3600 * 1000;

  it("the reaper deletes only ended jobs that finished before the cutoff, with their rollouts", async () => {
    const m = await model(slow(60));
    let now = Date.parse("2026-11-01T12:00:00Z");
    const { call, waitFor, evals, database } = server({ config: { evalBaseUrl: m.baseUrl, evalRetentionDays: 3 }, clock: () => now });
    const job = (body: object) => call("POST", "/v1/evals", { env_id: "reverse-text", model: "m", rollouts_per_example: 1, ...body }).then((r) => r.json.eval_id as string);

    const old1 = await job({ num_examples: 2 });
    const old2 = await job({ num_examples: 1 });
    await waitFor(old1, (j) => j.status === "completed");
    await waitFor(old2, (j) => j.status === "completed");
    now += 2 * DAY;
    const recent = await job({ num_examples: 1 });
    await waitFor(recent, (j) => j.status === "completed");
    now += 2 * DAY; // old ones ended 4 days ago, `recent` 2 days ago
    // A live job is never reaped: even given an old finished_at, its status guards it.
    const running = await job({ num_examples: 50, max_concurrent: 1 });
    await waitFor(running, (j) => j.progress.done >= 1);
    await database.db.update(evalJobs).set({ finishedAt: 0 }).where(eq(evalJobs.id, running));

    expect(await evals.reapEnded()).toEqual({ jobs: 2, rollouts: 3 });
    expect(await stored(database, old1)).toEqual({ jobs: 0, rollouts: 0 });
    expect(await stored(database, old2)).toEqual({ jobs: 0, rollouts: 0 });
    expect(await stored(database, recent)).toEqual({ jobs: 1, rollouts: 1 });
    expect((await call("GET", `/v1/evals/${running}`)).json.status).toBe("running");
    expect((await call("GET", `/v1/evals/${old1}`)).status).toBe(404);
    expect(await evals.reapEnded()).toEqual({ jobs: 0, rollouts: 0 });

    // A week on, the recent one goes too; the running one stays.
    now += 7 * DAY;
    expect((await evals.reapEnded())?.jobs).toBe(1);
    expect((await stored(database, recent)).jobs).toBe(0);
    expect((await stored(database, running)).jobs).toBe(1);
  });

  it("deletes at most a batch per pass, oldest first, and drains a backlog over passes", async () => {
    let now = Date.parse("2026-11-01T12:00:00Z");
    const { evals, database } = server({ config: { evalRetentionDays: 1 }, clock: () => now, start: false });
    const store = sqliteEvalStore(database.db);
    const [sample] = sampleRollouts(1);
    // Jobs written through the store as a runner writes them: claimed (running), two rollouts each, then ended.
    const ids: string[] = [];
    for (let i = 0; i < RETENTION_BATCH + 5; i++) {
      const id = `ev_batch_${String(i).padStart(4, "0")}`;
      await store.insertJob(jobRow(id, now));
      for (const rolloutIndex of [0, 1]) await store.insertRollout(id, { ...(sample as EvalRollout), rollout_index: rolloutIndex }, now);
      await store.fail(id, "ended for the test", now);
      ids.push(id);
      now += 1000;
    }
    now += 2 * DAY;
    expect(await evals.reapEnded()).toEqual({ jobs: RETENTION_BATCH, rollouts: 2 * RETENTION_BATCH });
    // The newest five are the ones left.
    const left = await Promise.all(ids.map(async (id) => (await stored(database, id)).jobs));
    expect(left).toEqual(ids.map((_, i) => (i >= RETENTION_BATCH ? 1 : 0)));
    expect(await evals.reapEnded()).toEqual({ jobs: 5, rollouts: 10 });
    expect(await database.db.select({ n: count() }).from(evalRollouts)).toEqual([{ n: 0 }]);
  });

  it("keeps everything when no retention is set", async () => {
    const m = await model(reverseLastUser);
    let now = Date.parse("2026-11-01T12:00:00Z");
    const { call, waitFor, evals, database } = server({ config: { evalBaseUrl: m.baseUrl }, clock: () => now });
    const id = (await call("POST", "/v1/evals", { env_id: "reverse-text", model: "m", num_examples: 1, rollouts_per_example: 1 })).json.eval_id as string;
    await waitFor(id, (j) => j.status === "completed");
    now += 3650 * DAY;
    expect(await evals.reapEnded()).toBeNull();
    expect(await stored(database, id)).toEqual({ jobs: 1, rollouts: 1 });
  });
});

describe("eval job size (eval_max_rollouts)", () => {
  it("refuses the 10^12-rollout job with 422 eval_too_large and stores nothing", async () => {
    const m = await model(reverseLastUser);
    const { call, database } = server({ config: { evalBaseUrl: m.baseUrl } });
    const res = await call("POST", "/v1/evals", { env_id: "math", model: "m", num_examples: 1_000_000_000, rollouts_per_example: 1024 });
    expect([res.status, res.json.error.code]).toEqual([422, "eval_too_large"]);
    expect(res.json.error.details).toMatchObject({ limit: 100_000 });
    const [jobs] = await database.db.select({ n: count() }).from(evalJobs);
    expect(jobs?.n).toBe(0);
  });

  it("the cap is the server's setting: at the limit is accepted, one past it is refused", async () => {
    const m = await model(reverseLastUser);
    const { call, waitFor } = server({ config: { evalBaseUrl: m.baseUrl, evalMaxRollouts: 4 } });
    const over = await call("POST", "/v1/evals", { env_id: "reverse-text", model: "m", num_examples: 5, rollouts_per_example: 1 });
    expect([over.status, over.json.error.code]).toEqual([422, "eval_too_large"]);
    const fits = await call("POST", "/v1/evals", { env_id: "reverse-text", model: "m", num_examples: 2, rollouts_per_example: 2 });
    expect(fits.status).toBe(201);
    await waitFor(fits.json.eval_id, (j) => j.status === "completed");
  });

  it("a job stored past the cap by an older server fails on resume instead of building its plan", async () => {
    const m = await model(reverseLastUser);
    const now = Date.now();
    const { call, waitFor, database, evals } = server({ config: { evalBaseUrl: m.baseUrl }, start: false, clock: () => now });
    const request = EvalRequest.parse({ env_id: "math", model: "m", num_examples: 1_000_000_000, rollouts_per_example: 1024, split: "train" });
    await database.db.insert(evalJobs).values({
      ...jobRow("ev_giant", now - 60_000),
      envId: "math", request, split: "train", numExamples: 1_000_000_000, totalRollouts: 1_024_000_000_000, leaseExpiresAt: now - 1,
    });
    expect((await call("GET", "/v1/evals/ev_giant")).json.status).toBe("running");
    evals.start(200);
    const job = await waitFor("ev_giant", (j) => j.status === "failed");
    expect(job.error).toMatch(/past this server's limit of 100000 per job/);
    expect(m.requests.length).toBe(0);
  });
});
