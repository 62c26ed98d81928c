import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import type { WorkerBindings } from "../../src/server/worker/worker.js";
import worker from "../../src/server/worker/index.js";

// Tenancy over D1: the tenant columns come from migration 0002 as wrangler applies it, and
// ownership and the database-counted quotas hold in the Worker as they do on Node.

const bindings: WorkerBindings = { ...env, EDGEGYM_API_KEYS: "alice:sk-alice, bob:sk-bob", EDGEGYM_ADMIN_API_KEYS: "ops:sk-ops" };

const call = async (key: string, method: string, path: string, body?: unknown, on: WorkerBindings = bindings) => {
  const headers: Record<string, string> = { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) };
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(`http://edgegym.test${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) }), on, ctx);
  await waitOnExecutionContext(ctx);
  const text = await res.text();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- assertions walk the body freely
  return { status: res.status, headers: res.headers, text, json: JSON.parse(text) as any };
};

/** The error body with what differs per request (its id, the id asked for) taken out. */
const same404 = (res: { status: number; json: { error: { message: string } } }, id: string) => ({ status: res.status, error: { ...res.json.error, request_id: "-", message: res.json.error.message.replaceAll(id, "<id>") } });

describe("tenants over D1", () => {
  it("applies migration 0002 (tenant columns) through d1_migrations", async () => {
    const applied = await env.DB.prepare("SELECT name FROM d1_migrations ORDER BY id").all<{ name: string }>();
    expect(applied.results.map((r) => r.name)).toContain("0002_tenants.sql");
  });

  it("answers another tenant's episode as an unknown id on GET, step, score and close; an admin sees it", async () => {
    const id = (await call("sk-alice", "POST", "/v1/envs/reverse-text/episodes", { index: 0 })).json.episode_id as string;
    expect(await env.DB.prepare("SELECT tenant FROM episodes WHERE id = ?").bind(id).first<{ tenant: string }>()).toEqual({ tenant: "alice" });
    const unknown = "ep_00000000000000000000000000000000";
    const step = { turn: 0, message: { role: "assistant", content: "<answer>x</answer>" } };
    for (const [method, suffix, body] of [["GET", "", undefined], ["POST", "/step", step], ["POST", "/score", undefined], ["DELETE", "", undefined]] as const) {
      const theirs = await call("sk-bob", method, `/v1/episodes/${id}${suffix}`, body);
      const none = await call("sk-bob", method, `/v1/episodes/${unknown}${suffix}`, body);
      expect(same404(theirs, id), `${method} ${suffix}`).toEqual(same404(none, unknown));
      expect([theirs.status, theirs.json.error.code]).toEqual([404, "episode_not_found"]);
    }
    expect((await call("sk-alice", "GET", `/v1/episodes/${id}`)).json).toMatchObject({ status: "active", turn: 0 });
    expect((await call("sk-ops", "POST", `/v1/episodes/${id}/step`, step)).status).toBe(200);
    expect((await call("sk-alice", "POST", `/v1/episodes/${id}/score`)).status).toBe(200);
  });

  it("lists forks over D1 with migration 0005's index: another tenant's episode is 404 and its forks never listed", async () => {
    const applied = await env.DB.prepare("SELECT name FROM d1_migrations ORDER BY id").all<{ name: string }>();
    expect(applied.results.map((r) => r.name)).toContain("0005_fork_children.sql");
    const id = (await call("sk-alice", "POST", "/v1/envs/tic-tac-toe/episodes", { seed: 5 })).json.episode_id as string;
    const forks = (await call("sk-alice", "POST", `/v1/episodes/${id}/fork`, { n: 3 })).json.episodes.map((e: { episode_id: string }) => e.episode_id) as string[];
    const unknown = "ep_00000000000000000000000000000000";
    const theirs = await call("sk-bob", "GET", `/v1/episodes/${id}/forks`);
    expect(same404(theirs, id)).toEqual(same404(await call("sk-bob", "GET", `/v1/episodes/${unknown}/forks`), unknown));
    expect([theirs.status, theirs.json.error.code]).toEqual([404, "episode_not_found"]);
    const first = await call("sk-alice", "GET", `/v1/episodes/${id}/forks?limit=2`);
    const second = await call("sk-alice", "GET", `/v1/episodes/${id}/forks?limit=2&cursor=${first.json.next_cursor}`);
    expect([...first.json.forks, ...second.json.forks].map((f: { episode_id: string }) => f.episode_id).sort()).toEqual([...forks].sort());
    expect(second.json.next_cursor).toBeNull();
    expect((await call("sk-ops", "GET", `/v1/episodes/${id}/forks`)).json.forks).toHaveLength(3);
    // The query reads a range of the index on D1's SQLite too.
    const plan = await env.DB.prepare("EXPLAIN QUERY PLAN SELECT id FROM episodes WHERE parent_id = ? AND tenant = ? ORDER BY created_at, id LIMIT 3").bind(id, "alice").all<{ detail: string }>();
    expect(plan.results.map((r) => r.detail).join("\n")).toMatch(/USING INDEX episodes_parent/);
  });

  it("answers another tenant's eval job as an unknown id on every route and lists only one's own", async () => {
    // Jobs do not run on a Worker; rows written as a Node server sharing the database would.
    const request = JSON.stringify({ env_id: "reverse-text", model: "m", num_examples: 1, rollouts_per_example: 1, max_concurrent: 1, split: "eval" });
    for (const [id, tenant] of [["ev_alice_1", "alice"], ["ev_bob_1", "bob"]]) {
      await env.DB.prepare(
        "INSERT INTO eval_jobs (id, env_id, env_version, model, status, request, split, num_examples, total_rollouts, cancel_requested, run_ms, created_at, updated_at, finished_at, tenant) VALUES (?, 'reverse-text', '1', 'm', 'completed', ?, 'eval', 1, 1, 0, 0, ?, ?, ?, ?)",
      )
        .bind(id, request, Date.now(), Date.now(), Date.now(), tenant)
        .run();
    }
    const unknown = "ev_unknown_0";
    for (const [method, suffix] of [["GET", ""], ["GET", "/events"], ["GET", "/results"], ["POST", "/cancel"], ["DELETE", ""]] as const) {
      const theirs = await call("sk-bob", method, `/v1/evals/ev_alice_1${suffix}`);
      const none = await call("sk-bob", method, `/v1/evals/${unknown}${suffix}`);
      expect(same404(theirs, "ev_alice_1"), `${method} ${suffix}`).toEqual(same404(none, unknown));
    }
    const ids = async (key: string) => (await call(key, "GET", "/v1/evals")).json.evals.map((e: { eval_id: string }) => e.eval_id).filter((i: string) => /_(alice|bob)_1$/.test(i));
    expect(await ids("sk-alice")).toEqual(["ev_alice_1"]);
    expect(await ids("sk-bob")).toEqual(["ev_bob_1"]);
    expect((await ids("sk-ops")).sort()).toEqual(["ev_alice_1", "ev_bob_1"]);
    expect((await call("sk-alice", "DELETE", "/v1/evals/ev_alice_1")).json).toMatchObject({ deleted: true });
  });

  it("counts open episodes in D1: EDGEGYM_QUOTA_OPEN_EPISODES gives 429 with Retry-After and details", async () => {
    const limited: WorkerBindings = { ...bindings, EDGEGYM_API_KEYS: "carol:sk-carol", EDGEGYM_QUOTA_OPEN_EPISODES: "2" };
    for (let i = 0; i < 2; i++) expect((await call("sk-carol", "POST", "/v1/envs/reverse-text/episodes", { index: i }, limited)).status).toBe(201);
    const over = await call("sk-carol", "POST", "/v1/envs/reverse-text/episodes", { index: 2 }, limited);
    expect([over.status, over.json.error.code, over.headers.get("retry-after")]).toEqual([429, "rate_limited", "5"]);
    expect(over.json.error.details).toEqual({ quota: "open_episodes", limit: 2, in_use: 2 });
  });

  it("refuses a key entry it would have to guess at, naming the variable and not the key", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const res = await call("sk-secret-x", "GET", "/v1/envs", undefined, { ...env, EDGEGYM_API_KEYS: "not a name:sk-secret-x" });
    logged.mockRestore();
    expect([res.status, res.json.error.code]).toEqual([500, "internal_error"]);
    expect(res.json.error.message).toMatch(/EDGEGYM_API_KEYS.*is not a tenant name/);
    expect(res.text).not.toContain("sk-secret-x");
  });
});
