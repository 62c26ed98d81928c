import { applyD1Migrations, createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/server/worker/index.js";

// Migration 0004 on D1: a database at 0003_env_hash holding rows the release before it wrote
// (test/fixtures/db-0002-episodes.sql), migrated the way wrangler applies ./drizzle, then
// served by this Worker. The SQLite twin is test/migrate-long-horizon.test.ts.

const TTT = "ep_8788c0383bf0454ab905b55fed2d39c6";
const TOOL = "ep_ec1ef8a426da4b57b22bcacceea8d45a";
const EXPIRED = "ep_52a0c6c63b794f57af0e1342322b04a5";

const bindings = { ...env, DB: env.LEGACY_DB };

const call = async (method: string, path: string, body?: unknown) => {
  const init: RequestInit = { method, headers: body === undefined ? {} : { "content-type": "application/json" } };
  if (body !== undefined) init.body = JSON.stringify(body);
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(`http://edgegym.test${path}`, init), bindings, ctx);
  await waitOnExecutionContext(ctx);
  const text = await res.text();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- assertions walk the body freely
  return { status: res.status, text, json: JSON.parse(text) as any };
};

describe("migration 0004 on a D1 database made by the release before it", () => {
  it("carries transcripts into per-turn rows: read, retried byte for byte, stepped and forked", async () => {
    await applyD1Migrations(env.LEGACY_DB, env.TEST_MIGRATIONS.slice(0, 4));
    const inserts = env.LEGACY_EPISODES_SQL.split("\n").filter((line) => line.startsWith("INSERT"));
    await env.LEGACY_DB.batch(inserts.map((line) => env.LEGACY_DB.prepare(line)));
    // The fixture was made with a one-hour TTL long ago: give the live rows an hour from now.
    await env.LEGACY_DB.prepare("UPDATE episodes SET expires_at = ? WHERE status <> 'expired'").bind(Date.now() + 3_600_000).run();
    const before = await env.LEGACY_DB.prepare("SELECT id, messages, replies, prompt_length FROM episodes WHERE status <> 'expired'").all<{ id: string; messages: string; replies: string; prompt_length: number }>();
    expect(before.results).toHaveLength(4);

    await applyD1Migrations(env.LEGACY_DB, env.TEST_MIGRATIONS);

    for (const row of before.results) {
      const episode = await call("GET", `/v1/episodes/${row.id}`);
      expect(episode.status, episode.text).toBe(200);
      expect(episode.json.messages).toEqual(JSON.parse(row.messages));
      expect(episode.json.turns[0].message_count).toBe(row.prompt_length);
    }
    const ttt = before.results.find((r) => r.id === TTT);
    if (!ttt) throw new Error("fixture lost the tic-tac-toe episode");
    const replies = JSON.parse(ttt.replies) as string[];
    const sent = (JSON.parse(ttt.messages) as { role: string }[]).slice(ttt.prompt_length).filter((m) => m.role === "assistant");
    for (const [turn, message] of sent.entries()) expect((await call("POST", `/v1/episodes/${TTT}/step`, { turn, message })).text).toBe(replies[turn]);

    const fork = await call("POST", `/v1/episodes/${TTT}/fork`, { n: 2 });
    expect([fork.status, fork.json.turn], fork.text).toEqual([201, 2]);
    const refused = await call("POST", `/v1/episodes/${TTT}/fork`, { turn: 1 });
    expect([refused.status, refused.json.error.code]).toEqual([409, "fork_unavailable"]);
    const toolStep = await call("POST", `/v1/episodes/${TOOL}/step`, { turn: 1, message: { role: "assistant", content: "<answer>4</answer>" } });
    expect(toolStep.status, toolStep.text).toBe(200);
    expect((await call("GET", `/v1/episodes/${EXPIRED}`)).status).toBe(410);
  });
});
