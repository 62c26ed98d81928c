import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { builtinEnvs, defineRubric, rowsDataset, singleTurnEnv } from "../../src/envs/index.js";
import { createWorker, type WorkerBindings } from "../../src/server/worker/worker.js";
import worker from "../../src/server/worker/index.js";
import { EDGEGYM_VERSION } from "../../src/version.js";
import checkedInDocument from "../../openapi/openapi.json" with { type: "json" };

// These run inside workerd against a local D1 that has ./drizzle applied
// (apply-migrations.ts), calling the Worker's handlers the way the runtime does.

const call = async (target: ReturnType<typeof createWorker>, bindings: WorkerBindings, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
  const init: RequestInit = { method, headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers } };
  if (body !== undefined) init.body = JSON.stringify(body);
  const ctx = createExecutionContext();
  const res = await target.fetch(new Request(`http://edgegym.test${path}`, init), bindings, ctx);
  await waitOnExecutionContext(ctx);
  const text = await res.text();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- assertions walk the body freely
  return { status: res.status, text, json: JSON.parse(text) as any };
};

const episodeRow = (id: string) =>
  env.DB.prepare("SELECT status, state, expires_at, (SELECT count(*) FROM episode_turns t WHERE t.episode_id = episodes.id) AS turn_rows FROM episodes WHERE id = ?")
    .bind(id)
    .first<{ status: string; state: string | null; expires_at: number; turn_rows: number }>();

describe("the Worker entry over D1", () => {
  it("serves the built-in environments with the runtime named worker", async () => {
    const health = await call(worker, env, "GET", "/health");
    expect(health.json).toMatchObject({ status: "ok", runtime: "worker", version: EDGEGYM_VERSION });
    // The Worker serves the document Node generates: same version, operations and schemas.
    const doc = (await call(worker, env, "GET", "/openapi.json")).json;
    expect(doc.info).toEqual(checkedInDocument.info);
    expect(doc.paths).toEqual(checkedInDocument.paths);
    expect(doc.components.schemas).toEqual(checkedInDocument.components.schemas);
    const list = await call(worker, env, "GET", "/v1/envs");
    expect(list.json.envs.map((e: { id: string }) => e.id).sort()).toEqual(builtinEnvs.filter((e) => e.runtimes.includes("worker")).map((e) => e.id).sort());
  });

  it("stores episodes in D1, through the migrations wrangler tracks in d1_migrations", async () => {
    const reset = await call(worker, env, "POST", "/v1/envs/reverse-text/episodes", { index: 2 });
    expect(reset.status).toBe(201);
    expect(await episodeRow(reset.json.episode_id)).toMatchObject({ status: "active" });
    const applied = await env.DB.prepare("SELECT name FROM d1_migrations ORDER BY id").all<{ name: string }>();
    expect(applied.results.map((r) => r.name)).toContain("0000_init.sql");
  });

  it("declares the Node-only python environment: absent from the list, env_unavailable on reset", async () => {
    const ids = (await call(worker, env, "GET", "/v1/envs")).json.envs.map((e: { id: string }) => e.id);
    expect(ids).not.toContain("python");
    const reset = await call(worker, env, "POST", "/v1/envs/python/episodes", {});
    expect([reset.status, reset.json.error.code]).toEqual([422, "env_unavailable"]);
  });
});

describe("the mathjs-based environments in workerd", () => {
  // The checker and the calculator build their mathjs instances here, inside the runtime,
  // from the bundle that has no Node module (not even the `crypto` seedrandom once asked for).
  it("scores a math answer with the equivalence checker", async () => {
    const reset = await call(worker, env, "POST", "/v1/envs/math/episodes", { seed: 7 });
    expect(reset.json.messages.at(-1).content).toBe("Compute 19 × (9 - 15).");
    const id = reset.json.episode_id;
    await call(worker, env, "POST", `/v1/episodes/${id}/step`, { turn: 0, message: { role: "assistant", content: "<answer>\\boxed{-\\frac{228}{2}}</answer>" } });
    const score = await call(worker, env, "POST", `/v1/episodes/${id}/score`);
    expect(score.json.score.reward).toBeCloseTo(1.1, 10);
  });

  it("verifies answers as math-verify reads them (verifyMath) on the stateless score route", async () => {
    const items = [
      { prompt: "p", completion: "<answer>-3\\frac{1}{2}</answer>", answer: "-7/2" },
      { prompt: "p", completion: "<answer>\\sin^2(x)+\\cos^2(x)</answer>", answer: "1" },
      { prompt: "p", completion: "<answer>-3\\frac{1}{2}</answer>", answer: "-5/2" },
      // Issue 28: confirmed at 32 digits with decimal.js inside workerd, so an approximate period is no period.
      { prompt: "p", completion: "<answer>\\cos(x + 2\\pi)</answer>", answer: "\\cos x" },
      { prompt: "p", completion: "<answer>\\cos(x + 6.283185307)</answer>", answer: "\\cos x" },
      { prompt: "p", completion: "<answer>60^\\circ</answer>", answer: "\\frac{\\pi}{3}" },
    ];
    const score = await call(worker, env, "POST", "/v1/envs/math/score", { items });
    expect(score.json.results.map((r: { score: { components: { score: number }[] } }) => r.score.components[0]?.score)).toEqual([1, 1, 0, 1, 0, 1]);
  });

  it("runs a tool-math calculator call during a step", async () => {
    const reset = await call(worker, env, "POST", "/v1/envs/tool-math/episodes", { seed: 11 });
    const expression = "(4682 + 4613 + 6417 + 3065 + 1802 + 1707 + 4860 + 9853) / 8";
    const toolCall = { id: "call_1", type: "function", function: { name: "calculator", arguments: JSON.stringify({ expression }) } };
    const step = await call(worker, env, "POST", `/v1/episodes/${reset.json.episode_id}/step`, { turn: 0, message: { role: "assistant", content: null, tool_calls: [toolCall] } });
    expect(step.json.messages).toEqual([{ role: "tool", tool_call_id: "call_1", content: "4624.875" }]);
  });
});

describe("an environment that runs only on Node", () => {
  const nodeOnly = singleTurnEnv({
    id: "node-only-test",
    version: "1.0.0",
    description: "Declares runtimes: [\"node\"], like an environment that needs a Node module.",
    dataset: rowsDataset({ train: [{ prompt: "say hi", answer: "hi" }] }),
    rubric: defineRubric([{ name: "exact", weight: 1, fn: ({ completion, answer, parser }) => Number(parser.parseAnswer(completion) === answer) }]),
    runtimes: ["node"],
  });
  const withNodeOnly = createWorker([...builtinEnvs, nodeOnly]);

  it("is absent from /v1/envs on the Worker", async () => {
    const list = await call(withNodeOnly, env, "GET", "/v1/envs");
    const ids = list.json.envs.map((e: { id: string }) => e.id);
    expect(ids).toContain("reverse-text");
    expect(ids).not.toContain("node-only-test");
  });

  it("answers a reset, a description and a scoring call with 422 env_unavailable", async () => {
    const reset = await call(withNodeOnly, env, "POST", "/v1/envs/node-only-test/episodes", {});
    expect([reset.status, reset.json.error.code]).toEqual([422, "env_unavailable"]);
    expect(reset.json.error.message).toMatch(/runtime \(worker\).*Node/);
    const info = await call(withNodeOnly, env, "GET", "/v1/envs/node-only-test");
    expect([info.status, info.json.error.code]).toEqual([422, "env_unavailable"]);
    const score = await call(withNodeOnly, env, "POST", "/v1/envs/node-only-test/score", { items: [{ prompt: "say hi", completion: "<answer>hi</answer>", answer: "hi" }] });
    expect([score.status, score.json.error.code]).toEqual([422, "env_unavailable"]);
    const unknown = await call(withNodeOnly, env, "POST", "/v1/envs/never-heard-of-it/episodes", {});
    expect([unknown.status, unknown.json.error.code]).toEqual([404, "env_not_found"]);
  });
});

describe("the cron trigger", () => {
  it("reaps expired episodes: drops their state and transcript, keeps a tombstone that answers 410", async () => {
    const expiring = (await call(worker, env, "POST", "/v1/envs/reverse-text/episodes", { index: 0 })).json.episode_id as string;
    const live = (await call(worker, env, "POST", "/v1/envs/reverse-text/episodes", { index: 1 })).json.episode_id as string;
    // Past its TTL a minute ago, as if the Worker had been idle since.
    await env.DB.prepare("UPDATE episodes SET expires_at = ? WHERE id = ?").bind(Date.now() - 60_000, expiring).run();

    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ cron: "*/10 * * * *", scheduledTime: Date.now() }), env, ctx);
    await waitOnExecutionContext(ctx);

    expect(await episodeRow(expiring)).toMatchObject({ status: "expired", state: null, turn_rows: 0 });
    expect(await episodeRow(live)).toMatchObject({ status: "active", turn_rows: 1 });
    expect((await episodeRow(live))?.state).not.toBeNull();
    const gone = await call(worker, env, "GET", `/v1/episodes/${expiring}`);
    expect([gone.status, gone.json.error.code]).toEqual([410, "episode_expired"]);
  });

  it("removes a tombstone after a week", async () => {
    const id = (await call(worker, env, "POST", "/v1/envs/reverse-text/episodes", { index: 0 })).json.episode_id as string;
    await env.DB.prepare("UPDATE episodes SET status = 'expired', expires_at = ? WHERE id = ?").bind(Date.now() - 8 * 24 * 3600 * 1000, id).run();
    await worker.scheduled(createScheduledController({ cron: "*/10 * * * *" }), env, createExecutionContext());
    expect(await episodeRow(id)).toBeNull();
    const gone = await call(worker, env, "GET", `/v1/episodes/${id}`);
    expect([gone.status, gone.json.error.code]).toEqual([404, "episode_not_found"]);
  });

  it("keeps an expired parent's turns that a live fork's prefix reads, and frees them when the fork expires", async () => {
    const parent = (await call(worker, env, "POST", "/v1/envs/double-check/episodes", { index: 0 })).json.episode_id as string;
    await call(worker, env, "POST", `/v1/episodes/${parent}/step`, { turn: 0, message: { role: "assistant", content: "<answer>1</answer>" } });
    const fork = (await call(worker, env, "POST", `/v1/episodes/${parent}/fork`, { turn: 1 })).json.episodes[0].episode_id as string;
    const prefix = (await call(worker, env, "GET", `/v1/episodes/${fork}`)).json.messages;
    const reap = async () => {
      const ctx = createExecutionContext();
      await worker.scheduled(createScheduledController({ cron: "*/10 * * * *", scheduledTime: Date.now() }), env, ctx);
      await waitOnExecutionContext(ctx);
    };
    await env.DB.prepare("UPDATE episodes SET expires_at = ? WHERE id = ?").bind(Date.now() - 60_000, parent).run();
    await reap();
    expect(await episodeRow(parent)).toMatchObject({ status: "expired", turn_rows: 2 });
    expect((await call(worker, env, "GET", `/v1/episodes/${parent}`)).status).toBe(410);
    expect((await call(worker, env, "GET", `/v1/episodes/${fork}`)).json.messages).toEqual(prefix);
    const step = await call(worker, env, "POST", `/v1/episodes/${fork}/step`, { turn: 1, message: { role: "assistant", content: "<answer>2</answer>" } });
    expect(step.status, step.text).toBe(200);

    await env.DB.prepare("UPDATE episodes SET expires_at = ? WHERE id = ?").bind(Date.now() - 60_000, fork).run();
    await reap();
    expect(await episodeRow(parent)).toMatchObject({ turn_rows: 0 });
    expect(await episodeRow(fork)).toMatchObject({ status: "expired", turn_rows: 0 });
  });
});

describe("deleting evaluation jobs on D1", () => {
  // Jobs do not run on a Worker (POST /v1/evals is 503 there), but a D1 database can hold
  // them (written by a Node server, or imported), and the delete and retention statements
  // must hold on D1 itself: written here straight into the tables.
  const DAY = 24 * 3600 * 1000;
  const addJob = async (id: string, status: string, finishedAt: number | null, rollouts: number) => {
    const request = JSON.stringify({ env_id: "reverse-text", model: "m", num_examples: 1, rollouts_per_example: rollouts, max_concurrent: 1, split: "eval" });
    await env.DB.prepare(
      "INSERT INTO eval_jobs (id, env_id, env_version, model, status, request, split, num_examples, total_rollouts, cancel_requested, run_ms, created_at, updated_at, finished_at) VALUES (?, 'reverse-text', '1', 'm', ?, ?, 'eval', 1, ?, 0, 0, ?, ?, ?)",
    )
      .bind(id, status, request, rollouts, Date.now() - 30 * DAY, Date.now(), finishedAt)
      .run();
    for (let i = 0; i < rollouts; i++) {
      await env.DB.prepare("INSERT INTO eval_rollouts (job_id, example_id, rollout_index, reward, row, created_at) VALUES (?, 0, ?, 1, '{}', 0)").bind(id, i).run();
    }
  };
  const rows = async (id: string) => ({
    jobs: (await env.DB.prepare("SELECT count(*) AS n FROM eval_jobs WHERE id = ?").bind(id).first<{ n: number }>())?.n,
    rollouts: (await env.DB.prepare("SELECT count(*) AS n FROM eval_rollouts WHERE job_id = ?").bind(id).first<{ n: number }>())?.n,
  });

  it("DELETE removes an ended job and its rollouts, refuses a running one", async () => {
    await addJob("ev_d1_done", "completed", Date.now(), 3);
    await addJob("ev_d1_live", "running", null, 2);
    const deleted = await call(worker, env, "DELETE", "/v1/evals/ev_d1_done");
    expect([deleted.status, deleted.json]).toEqual([200, { eval_id: "ev_d1_done", deleted: true, rollouts_deleted: 3 }]);
    expect(await rows("ev_d1_done")).toEqual({ jobs: 0, rollouts: 0 });
    const refused = await call(worker, env, "DELETE", "/v1/evals/ev_d1_live");
    expect([refused.status, refused.json.error.code]).toEqual([409, "eval_running"]);
    expect(await rows("ev_d1_live")).toEqual({ jobs: 1, rollouts: 2 });
  });

  it("the cron deletes ended jobs past EDGEGYM_EVAL_RETENTION_DAYS, and only those", async () => {
    await addJob("ev_d1_old", "failed", Date.now() - 10 * DAY, 2);
    await addJob("ev_d1_recent", "completed", Date.now() - DAY, 1);
    await addJob("ev_d1_running", "running", null, 1);
    await worker.scheduled(createScheduledController({ cron: "*/10 * * * *" }), env, createExecutionContext());
    expect(await rows("ev_d1_old")).toEqual({ jobs: 1, rollouts: 2 }); // no retention set: kept
    const bindings: WorkerBindings = { ...env, EDGEGYM_EVAL_RETENTION_DAYS: "7" };
    await worker.scheduled(createScheduledController({ cron: "*/10 * * * *" }), bindings, createExecutionContext());
    expect(await rows("ev_d1_old")).toEqual({ jobs: 0, rollouts: 0 });
    expect(await rows("ev_d1_recent")).toEqual({ jobs: 1, rollouts: 1 });
    expect(await rows("ev_d1_running")).toEqual({ jobs: 1, rollouts: 1 });
  });
});

describe("configuration from Worker vars and secrets", () => {
  it("takes API keys from EDGEGYM_API_KEYS and TTLs from the vars", async () => {
    const bindings: WorkerBindings = { ...env, EDGEGYM_API_KEYS: "sk-one, sk-two", EDGEGYM_TTL_SECONDS: "120", EDGEGYM_MAX_TTL_SECONDS: "300" };
    expect((await call(worker, bindings, "GET", "/v1/envs")).json.error.code).toBe("unauthorized");
    expect((await call(worker, bindings, "GET", "/v1/envs", undefined, { authorization: "Bearer sk-nope" })).status).toBe(401);
    const auth = { authorization: "Bearer sk-two" };
    const before = Date.now();
    const reset = await call(worker, bindings, "POST", "/v1/envs/reverse-text/episodes", { index: 0 }, auth);
    expect(reset.status).toBe(201);
    const ttlMs = Date.parse(reset.json.expires_at) - before;
    expect(ttlMs).toBeGreaterThan(110_000);
    expect(ttlMs).toBeLessThanOrEqual(121_000);
    const capped = await call(worker, bindings, "POST", "/v1/envs/reverse-text/episodes", { index: 0, ttl_seconds: 10_000 }, auth);
    expect(Date.parse(capped.json.expires_at) - before).toBeLessThanOrEqual(301_000);
  });

  it("says which var is wrong instead of failing obscurely", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const res = await call(worker, { ...env, EDGEGYM_TTL_SECONDS: "an hour" }, "GET", "/health");
    expect(logged).toHaveBeenCalledWith("edgegym: invalid Worker configuration:", expect.any(Error));
    logged.mockRestore();
    expect(res.status).toBe(500);
    expect(res.json.error).toMatchObject({ code: "internal_error" });
    expect(res.json.error.message).toMatch(/EDGEGYM_TTL_SECONDS must be a positive integer/);
  });

  it("gives judge-qa the operator's judges from vars and secrets; a client's judge URL is refused", async () => {
    const bindings = { ...env, EDGEGYM_JUDGES: JSON.stringify({ gpt: { base_url: "https://judge.example/v1", model: "m", api_key_env: "JUDGE_SECRET" } }), JUDGE_SECRET: "sk-judge-worker" } as WorkerBindings;
    const reset = await call(worker, bindings, "POST", "/v1/envs/judge-qa/episodes", { index: 0, args: { judge: "gpt" } });
    expect(reset.status).toBe(201);
    const episode = await call(worker, bindings, "GET", `/v1/episodes/${reset.json.episode_id}`);
    for (const secret of ["sk-judge-worker", "judge.example"]) expect(episode.text).not.toContain(secret);
    const attack = await call(worker, bindings, "POST", "/v1/envs/judge-qa/episodes", { index: 0, args: { judge_base_url: "http://127.0.0.1:9/v1" } });
    expect([attack.status, attack.json.error.code]).toEqual([422, "invalid_env_args"]);
    expect(attack.json.error.message).toMatch(/judge_base_url is not accepted/);
    expect((await call(worker, env, "POST", "/v1/envs/judge-qa/episodes", { index: 0 })).json.error.message).toMatch(/no LLM judge is configured/);
  });
});
