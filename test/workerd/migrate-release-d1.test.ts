import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { builtinEnvs, EnvRegistry } from "../../src/envs/index.js";
import { createApp } from "../../src/server/app.js";
import { openD1Database } from "../../src/server/db/d1.js";

// A D1 database as the previous release left it: migrations 0000–0002 applied by the
// same tracking wrangler uses (d1_migrations), holding the episodes that release made
// (test/fixtures/db-0.1.0). Applying ./drizzle then moves it forward by 0003_env_hash and 0004_long_horizon.
// Those episodes expire on 2026-12-01, so the app's clock is pinned before that.
const NOW = Date.parse("2026-11-24T12:00:00Z");

describe("a D1 database made by the release before episode versions", () => {
  it("moves forward with 0003_env_hash and 0004_long_horizon without losing an episode, and its episodes keep working", async () => {
    const db = env.RELEASE_DB;
    await applyD1Migrations(db, env.TEST_MIGRATIONS.filter((m) => m.name < "0003"));
    const rows = env.RELEASE_EPISODES;
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      const columns = Object.keys(row);
      await db
        .prepare(`INSERT INTO episodes (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`)
        .bind(...columns.map((c) => row[c] ?? null))
        .run();
    }
    await applyD1Migrations(db, env.TEST_MIGRATIONS);
    const applied = await db.prepare("SELECT name FROM d1_migrations ORDER BY id").all<{ name: string }>();
    expect(applied.results.map((r) => r.name)).toEqual(env.TEST_MIGRATIONS.map((m) => m.name));
    // The head columns are as they were (0004_long_horizon moved each transcript into
    // per-turn rows, read back over HTTP below); 0004 adds a null hash.
    const head = ["id", "env_id", "env_version", "status", "turn", "score", "metadata", "tenant"];
    const after = await db.prepare(`SELECT ${head.join(", ")}, env_hash FROM episodes ORDER BY id`).all<Record<string, unknown>>();
    expect(after.results).toEqual(rows.map((row) => ({ ...Object.fromEntries(head.map((c) => [c, row[c]])), env_hash: null })));

    const { app } = createApp({ db: openD1Database(db), registry: new EnvRegistry("worker", builtinEnvs), clock: () => NOW });
    const call = async (method: string, path: string, body?: unknown) => {
      const init: RequestInit = { method, headers: body === undefined ? {} : { "content-type": "application/json" } };
      if (body !== undefined) init.body = JSON.stringify(body);
      const res = await app.request(path, init);
      return { status: res.status, json: (await res.json()) as Record<string, unknown> & { score?: { reward: number } } };
    };
    for (const row of rows) expect((await call("GET", `/v1/episodes/${String(row.id)}`)).json.messages).toEqual(JSON.parse(String(row.messages)));
    const ttt = "ep_feda318b1d2746a69a85012e2c4b3977";
    expect((await call("GET", `/v1/episodes/${ttt}`)).json).toMatchObject({ env_id: "tic-tac-toe", env_hash: null, turn: 1, metadata: { made_by: "0.1.0" } });
    const step = await call("POST", `/v1/episodes/${ttt}/step`, { turn: 1, message: { role: "assistant", content: "<move>1</move>" } });
    expect(step.status).toBe(200);
    const scored = "ep_5ecd1f3b8bf847578adfacfe91f362cc";
    expect((await call("POST", `/v1/episodes/${scored}/score`)).json.score?.reward).toBe(0.23676470588235296);
    expect((await call("POST", `/v1/episodes/${scored}/rescore`, {})).json).toMatchObject({ episode_env_hash: null, score: { reward: 0.23676470588235296 } });
    const fresh = await call("POST", "/v1/episodes/ep_b8261433e4494f979f1320398c0af0a5/step", { turn: 0, message: { role: "assistant", content: "<answer>x</answer>" } });
    expect(fresh.status).toBe(200);
  });
});
