import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { builtinEnvs, EnvRegistry } from "../src/envs/index.js";
import { createApp } from "../src/server/app.js";
import { openNodeDatabase } from "../src/server/db/node-sqlite.js";
import { jsonInit, readReply } from "./support/reply.js";

// A database the release before episode versions made (test/fixtures/db-0.1.0/README.md):
// opening it applies 0003_env_hash, 0004_long_horizon and 0005_fork_children, and every episode in it must still read, step, score
// and rescore. Its episodes expire on 2026-12-01, so the clock is pinned before that.
const FIXTURE = "test/fixtures/db-0.1.0/edgegym-0.1.0.sqlite";
const NOW = Date.parse("2026-11-24T12:00:00Z");
const TTT = "ep_feda318b1d2746a69a85012e2c4b3977";
const SCORED = "ep_5ecd1f3b8bf847578adfacfe91f362cc";
const FRESH = "ep_b8261433e4494f979f1320398c0af0a5";

const dir = mkdtempSync(join(tmpdir(), "edgegym-migrate-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("a database made by the release before episode versions", () => {
  it("moves forward with 0003_env_hash, 0004_long_horizon and 0005_fork_children without losing an episode, and its episodes keep working", async () => {
    const path = join(dir, "edgegym.db");
    copyFileSync(FIXTURE, path);
    const before = new Database(path, { readonly: true });
    const rowsBefore = before.prepare("SELECT id, env_id, env_version, status, turn, score FROM episodes ORDER BY id").all();
    // 0004_long_horizon moves each transcript into per-turn rows: read back over HTTP below.
    const transcripts = new Map((before.prepare("SELECT id, messages FROM episodes").all() as { id: string; messages: string }[]).map((r) => [r.id, JSON.parse(r.messages) as unknown[]]));
    const migrationsBefore = (before.prepare("SELECT count(*) AS n FROM __drizzle_migrations").get() as { n: number }).n;
    before.close();
    expect(rowsBefore).toHaveLength(3);

    const database = openNodeDatabase(path);
    const { app } = createApp({ db: database.db, registry: new EnvRegistry("node", builtinEnvs), clock: () => NOW });
    const call = async (method: string, url: string, body?: unknown) => readReply(await app.request(url, jsonInit(method, body, {})));
    try {
      // Every row is still there, as it was, with no hash.
      const raw = new Database(path, { readonly: true });
      expect(raw.prepare("SELECT id, env_id, env_version, status, turn, score FROM episodes ORDER BY id").all()).toEqual(rowsBefore);
      expect(raw.prepare("SELECT count(*) AS n FROM episodes WHERE env_hash IS NULL").get()).toEqual({ n: 3 });
      expect((raw.prepare("SELECT count(*) AS n FROM __drizzle_migrations").get() as { n: number }).n).toBe(migrationsBefore + 3);
      raw.close();

      for (const [id, messages] of transcripts) expect((await call("GET", `/v1/episodes/${id}`)).json.messages).toEqual(messages);
      const ttt = await call("GET", `/v1/episodes/${TTT}`);
      expect(ttt.json).toMatchObject({ env_id: "tic-tac-toe", env_version: "1.0.0", env_hash: null, turn: 1, metadata: { made_by: "0.1.0" } });
      // Held to its version only: the same version steps it.
      const step = await call("POST", `/v1/episodes/${TTT}/step`, { turn: 1, message: { role: "assistant", content: "<move>1</move>" } });
      expect(step.status, step.text).toBe(200);
      expect(step.json.turn).toBe(2);
      // A retry of the step the old release applied still gets its stored bytes.
      const retry = await call("POST", `/v1/episodes/${TTT}/step`, { turn: 0, message: { role: "assistant", content: "<move>5</move>" } });
      expect(retry.status).toBe(200);
      expect(retry.json.turn).toBe(1);

      const scored = await call("POST", `/v1/episodes/${SCORED}/score`);
      expect(scored.json.score.reward).toBe(0.23676470588235296);
      const rescored = await call("POST", `/v1/episodes/${SCORED}/rescore`, {});
      expect(rescored.json).toMatchObject({ episode_env_hash: null, env_hash: expect.stringMatching(/^sha256:/), score: scored.json.score });

      const fresh = await call("POST", `/v1/episodes/${FRESH}/step`, { turn: 0, message: { role: "assistant", content: "<answer>x</answer>" } });
      expect(fresh.status, fresh.text).toBe(200);
      // New episodes on the migrated database carry their hash.
      const reset = await call("POST", "/v1/envs/reverse-text/episodes", { index: 0 });
      expect(reset.json.env_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    } finally {
      database.close();
    }
  });
});
