import Database from "better-sqlite3";
import { drizzle } from "drizzle-orm/better-sqlite3";
import { migrate } from "drizzle-orm/better-sqlite3/migrator";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { builtinEnvs, EnvRegistry } from "../src/envs/index.js";
import { createApp } from "../src/server/app.js";
import { MIGRATIONS_DIR, openNodeDatabase } from "../src/server/db/node-sqlite.js";
import { jsonInit, readReply } from "./support/reply.js";

// A database made by the release before per-turn storage (migrations 0000-0003, rows
// written by that release's own code: test/fixtures/db-0002-episodes.sql), migrated by
// 0003 and then read, stepped, retried, forked and scored by this one.

const IDS = {
  scored: "ep_5c6d4f90af8f4bcfb2e521b822d7c0e0",
  ttt: "ep_8788c0383bf0454ab905b55fed2d39c6",
  tool: "ep_ec1ef8a426da4b57b22bcacceea8d45a",
  closed: "ep_a48c6332947c484994747d1036fca4e0",
  expired: "ep_52a0c6c63b794f57af0e1342322b04a5",
};
/** The fixture's episodes were made at 10:00:00 with a one-hour TTL; seconds later they are live. */
const NOW = Date.parse("2026-11-20T10:00:10.000Z");
const FIXTURE = join(import.meta.dirname, "fixtures", "db-0002-episodes.sql");

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A migrations folder holding only the first `count` of ./drizzle: the schema a release at that migration had. */
function migrationsUpTo(count: number): string {
  const dir = mkdtempSync(join(tmpdir(), "edgegym-migrations-"));
  dirs.push(dir);
  mkdirSync(join(dir, "meta"));
  const journal = JSON.parse(readFileSync(join(MIGRATIONS_DIR, "meta", "_journal.json"), "utf8")) as { entries: { tag: string }[] };
  journal.entries = journal.entries.slice(0, count);
  writeFileSync(join(dir, "meta", "_journal.json"), JSON.stringify(journal));
  for (const e of journal.entries) copyFileSync(join(MIGRATIONS_DIR, `${e.tag}.sql`), join(dir, `${e.tag}.sql`));
  return dir;
}

interface LegacyRow {
  id: string;
  messages: string;
  replies: string;
  prompt_length: number;
}

/** A SQLite file at 0003 (the release with env hashes) with the fixture's rows, and what those rows held. */
function legacyDatabase(): { file: string; rows: Map<string, LegacyRow> } {
  const dir = mkdtempSync(join(tmpdir(), "edgegym-legacy-"));
  dirs.push(dir);
  const file = join(dir, "edgegym.db");
  const sqlite = new Database(file);
  migrate(drizzle(sqlite), { migrationsFolder: migrationsUpTo(4) });
  for (const line of readFileSync(FIXTURE, "utf8").split("\n")) if (line.startsWith("INSERT")) sqlite.prepare(line).run();
  const rows = new Map((sqlite.prepare("SELECT id, messages, replies, prompt_length FROM episodes").all() as LegacyRow[]).map((r) => [r.id, r]));
  sqlite.close();
  return { file, rows };
}

describe("migration 0004 on a database made by the release before it (SQLite)", () => {
  const { file, rows } = legacyDatabase();
  const database = openNodeDatabase(file);
  afterAll(() => database.close());
  const { app } = createApp({ db: database.db, registry: new EnvRegistry("node", builtinEnvs), clock: () => NOW });
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => readReply(await app.request(path, jsonInit(method, body, headers)));
  const legacy = (id: string) => {
    const row = rows.get(id);
    if (!row) throw new Error(`fixture has no ${id}`);
    return { messages: JSON.parse(row.messages) as { role: string; content: string | null }[], replies: JSON.parse(row.replies) as string[], promptLength: row.prompt_length };
  };

  it("keeps every live episode's transcript, message for message, and pages it by turn", async () => {
    for (const id of [IDS.scored, IDS.ttt, IDS.tool, IDS.closed]) {
      const episode = await call("GET", `/v1/episodes/${id}`);
      expect(episode.status, episode.text).toBe(200);
      expect(episode.json.messages).toEqual(legacy(id).messages);
      expect(episode.json.turns[0].message_count).toBe(legacy(id).promptLength);
      expect(episode.json.turns).toHaveLength(episode.json.turn + 1);
    }
    const page = await call("GET", `/v1/episodes/${IDS.ttt}?from_turn=2&limit=1`);
    const { messages, replies } = legacy(IDS.ttt);
    const last = JSON.parse(replies[1] as string) as { messages: unknown[] };
    expect(page.json.messages).toEqual(messages.slice(messages.length - 1 - last.messages.length));
    expect((await call("GET", `/v1/episodes/${IDS.scored}`)).json).toMatchObject({ status: "done", score: { reward: expect.any(Number) } });
    expect((await call("GET", `/v1/episodes/${IDS.closed}`)).json).toMatchObject({ status: "closed", metadata: { run: "old" } });
    expect((await call("GET", `/v1/episodes/${IDS.expired}`)).status).toBe(410);
  });

  it("answers retries of steps taken before the migration with the bytes stored then", async () => {
    const { messages, replies, promptLength } = legacy(IDS.ttt);
    const sent = messages.slice(promptLength).filter((m) => m.role === "assistant");
    for (const [turn, message] of sent.entries()) {
      const retry = await call("POST", `/v1/episodes/${IDS.ttt}/step`, { turn, message });
      expect(retry.text).toBe(replies[turn]);
    }
    const tool = legacy(IDS.tool);
    const call0 = tool.messages[tool.promptLength];
    expect((await call("POST", `/v1/episodes/${IDS.tool}/step`, { turn: 0, message: call0 })).text).toBe(tool.replies[0]);
  });

  it("keeps the reset idempotency key of an old episode", async () => {
    const again = await call("POST", "/v1/envs/tic-tac-toe/episodes", { seed: 202, args: { opponent: "random" } }, { "idempotency-key": "legacy-ttt" });
    expect([again.status, again.json.episode_id]).toEqual([201, IDS.ttt]);
    expect(again.json.messages).toEqual(legacy(IDS.ttt).messages.slice(0, legacy(IDS.ttt).promptLength));
  });

  it("steps and forks old episodes from their current turn; earlier turns have no stored state", async () => {
    const fork = await call("POST", `/v1/episodes/${IDS.ttt}/fork`, { n: 2 });
    expect(fork.status, fork.text).toBe(201);
    expect(fork.json.turn).toBe(2);
    const branch = fork.json.episodes[0].episode_id as string;
    const taken = new Set([...legacy(IDS.ttt).messages.map((m) => m.content ?? "").join("\n").matchAll(/(?:taking cell|played) (\d)/g)].map((m) => Number(m[1])));
    const cell = [1, 2, 3, 4, 5, 6, 7, 8, 9].find((c) => !taken.has(c));
    const onParent = await call("POST", `/v1/episodes/${IDS.ttt}/step`, { turn: 2, message: { role: "assistant", content: `<move>${cell}</move>` } });
    const onBranch = await call("POST", `/v1/episodes/${branch}/step`, { turn: 2, message: { role: "assistant", content: `<move>${cell}</move>` } });
    expect([onParent.status, onBranch.status]).toEqual([200, 200]);
    // The state migrated with the head is the state the old release had: the same move gets the same answer.
    expect(onBranch.json.messages).toEqual(onParent.json.messages);
    const refused = await call("POST", `/v1/episodes/${IDS.ttt}/fork`, { turn: 1 });
    expect([refused.status, refused.json.error.code, refused.json.error.details.reason]).toEqual([409, "fork_unavailable", "state_not_stored"]);
    expect((await call("POST", `/v1/episodes/${IDS.closed}/fork`, { turn: 0 })).status).toBe(201);

    const toolStep = await call("POST", `/v1/episodes/${IDS.tool}/step`, { turn: 1, message: { role: "assistant", content: "<answer>4</answer>" } });
    expect(toolStep.status, toolStep.text).toBe(200);
    const scored = await call("POST", `/v1/episodes/${IDS.tool}/score`);
    expect(scored.json.score.metrics).toMatchObject({ turns: 2, tool_calls: 1 });
  });
});
