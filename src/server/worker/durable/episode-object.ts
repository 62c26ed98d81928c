import { DurableObject } from "cloudflare:workers";
import type { DurableObjectNamespace } from "@cloudflare/workers-types/index.ts";
import { drizzle } from "drizzle-orm/durable-sqlite";
import { migrate } from "drizzle-orm/durable-sqlite/migrator";
import type { EdgegymDb } from "../../db/database.js";
import { EpisodeStore, TOMBSTONE_MS, type ForkPoint, type LineageEntry, type StepRow, type StepWrite, type TurnRecord, type TurnSegment } from "../../db/episode-store.js";
import * as schema from "../../db/schema.js";
import type { EpisodeRow, NewEpisodeRow } from "../../db/schema.js";
import { REPORT_BYTES } from "./index-entries.js";
import type { EpisodeIndexObject } from "./episode-index-object.js";
import { fresh, upgrade } from "./migrations.gen.js";

export interface EpisodeObjectEnv {
  EPISODE_INDEX: DurableObjectNamespace;
  EPISODES: DurableObjectNamespace;
}

/** What this object last told the index (kept in memory: after an eviction the next change reports again). */
interface Reported {
  status: string;
  storedBytes: number;
  expiresAt: number;
}

/** A child's key: created_at zero-padded so that keys sort as (created_at, id). */
const childKey = (createdAt: number, id: string): string => `child:${String(createdAt).padStart(15, "0")}:${id}`;

/** The key of a fork holding this episode's turns. */
const holderKey = (id: string): string => `holder:${id}`;

/** The time a child is listed under (its `child:` key), by id: makes a retried fork's listing idempotent. */
const childAtKey = (id: string): string => `child-at:${id}`;

/** Keys per storage put or get (the Durable Object storage API takes at most 128). */
const KEYS_PER_PUT = 128;

/** How often an ancestor that a live fork still holds looks again whether it may drop its turns. */
const HOLD_RECHECK_MS = 3600 * 1000;

/** Forks asked at once whether they are live: bounds the fan-out of one alarm. */
const HOLDERS_PER_ROUND = 32;

/** Rounds of HOLDERS_PER_ROUND one alarm asks before it leaves the rest to the next. */
const HOLDER_ROUNDS_PER_ALARM = 8;

/** When the alarm comes back for the forks it had no rounds left to ask. */
const HOLDER_CONTINUE_MS = 10_000;

/**
 * One episode in its own SQLite-backed Durable Object: its head, turn rows and lineage in
 * the object's SQLite, written by the same `EpisodeStore` (and the same guarded SQL) as on
 * Node and D1, through drizzle's durable-sqlite driver. The object serializes its own
 * requests, so the guards never lose here in practice; they are kept because they make a
 * retry or a racing duplicate answer exactly as on the other stores.
 *
 * Hosting the existing store rather than a second one keeps one implementation of every
 * write. An object holds only the episode tables (migrations.gen.ts, made from ./drizzle by
 * scripts/do-migrations.ts), created in one migration on its first write.
 *
 * Expiry is an alarm at the episode's expiry: no scan over episodes. The alarm finds the
 * TTL moved on (steps refresh it) and sleeps again, or makes the head a tombstone (410)
 * for a week, then deletes everything.
 */
export class EpisodeObject extends DurableObject<EpisodeObjectEnv> {
  private store: EpisodeStore | null = null;
  private reported: Reported | null = null;

  // No types from @cloudflare/workers-types here: the base class brings the runtime's own,
  // and checking one copy against the other made the workerd typecheck take minutes.
  private get storage() {
    return this.ctx.storage;
  }

  /** The store, migrating the object's SQLite first when `create` (writes); null for a read of an object never written. */
  private async open(create: boolean): Promise<EpisodeStore | null> {
    if (this.store) return this.store;
    const exists = this.storage.sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'episodes'").toArray().length > 0;
    // A read of an unknown id must not create storage: ids are client input.
    if (!exists && !create) return null;
    const db = drizzle(this.storage as never, { schema });
    // A new object creates the episode tables in one migration; one that has tables applies
    // only what it has not (drizzle's __drizzle_migrations): older objects catch up here.
    await migrate(db, exists ? upgrade : fresh);
    this.store = new EpisodeStore(db as unknown as EdgegymDb);
    return this.store;
  }

  private index(): EpisodeIndexObject {
    const ns = this.env.EPISODE_INDEX;
    return ns.get(ns.idFromName("index")) as unknown as EpisodeIndexObject;
  }

  /** Tells the index what changed, when it matters to quotas: status, 64 KiB of bytes, or half a TTL of expiry. */
  private async report(head: Pick<StepRow, "id" | "status" | "storedBytes" | "expiresAt" | "ttlSeconds">, force = false): Promise<void> {
    const r = this.reported;
    const due =
      force ||
      !r ||
      r.status !== head.status ||
      Math.floor(head.storedBytes / REPORT_BYTES) !== Math.floor(r.storedBytes / REPORT_BYTES) ||
      head.expiresAt - r.expiresAt >= (head.ttlSeconds * 1000) / 2;
    if (!due) return;
    try {
      await this.index().report(head.id, head.status, head.storedBytes, head.expiresAt);
      this.reported = { status: head.status, storedBytes: head.storedBytes, expiresAt: head.expiresAt };
    } catch (err) {
      // The write is committed; the quota figure is late until the next report. Never fail the request for it.
      console.error("edgegym: episode index report failed:", err);
    }
  }

  private async reportHead(id: string, force = false): Promise<void> {
    const head = await (await this.open(false))?.getForStep(id);
    if (head) await this.report(head, force);
  }

  private async arm(expiresAt: number): Promise<void> {
    const current = await this.storage.getAlarm();
    if (current === null || current > expiresAt) await this.storage.setAlarm(expiresAt);
  }

  async insert(row: NewEpisodeRow, opening: unknown[]): Promise<{ row: EpisodeRow; created: boolean }> {
    const result = await ((await this.open(true)) as EpisodeStore).insert(row, opening);
    if (result.created) {
      await this.arm(result.row.expiresAt);
      this.reported = { status: result.row.status, storedBytes: result.row.storedBytes, expiresAt: result.row.expiresAt };
    }
    return result;
  }

  async insertFork(base: NewEpisodeRow, lineage: LineageEntry[]): Promise<boolean> {
    const inserted = await ((await this.open(true)) as EpisodeStore).insertForks(base, [{ id: base.id, idempotencyKey: base.idempotencyKey ?? null }], lineage);
    if (inserted.length > 0) {
      await this.arm(base.expiresAt);
      this.reported = { status: "active", storedBytes: base.storedBytes ?? 0, expiresAt: base.expiresAt };
    }
    return inserted.length > 0;
  }

  async get(id: string): Promise<EpisodeRow | undefined> {
    return (await this.open(false))?.get(id);
  }

  async getForStep(id: string, turn?: number): Promise<StepRow | undefined> {
    return (await this.open(false))?.getForStep(id, turn);
  }

  async turnForRetry(id: string, turn: number): Promise<{ message: unknown; reply: string | null } | undefined> {
    return (await this.open(false))?.turnForRetry(id, turn);
  }

  async lineage(id: string): Promise<LineageEntry[]> {
    return (await (await this.open(false))?.lineage(id)) ?? [];
  }

  async readTurns(segments: TurnSegment[]): Promise<TurnRecord[]> {
    return (await (await this.open(false))?.readTurns(segments)) ?? [];
  }

  async forkPoint(id: string, turn: number): Promise<ForkPoint | undefined> {
    return (await this.open(false))?.forkPoint(id, turn);
  }

  async commitStep(w: StepWrite): Promise<boolean> {
    const store = await this.open(false);
    if (!store) return false;
    const won = await store.commitStep(w);
    if (won && w.before) {
      await this.report({ id: w.id, status: w.status, storedBytes: w.before.storedBytes + w.addedBytes, expiresAt: w.expiresAt, ttlSeconds: w.before.ttlSeconds });
    }
    return won;
  }

  async saveScore(id: string, score: unknown, now: number, expiresAt: number): Promise<void> {
    await (await this.open(false))?.saveScore(id, score, now, expiresAt);
    await this.reportHead(id);
  }

  async replaceScore(id: string, expectedTurn: number, score: unknown, now: number, expiresAt: number): Promise<boolean> {
    const replaced = (await (await this.open(false))?.replaceScore(id, expectedTurn, score, now, expiresAt)) ?? false;
    if (replaced) await this.reportHead(id);
    return replaced;
  }

  async close(id: string, now: number): Promise<void> {
    await (await this.open(false))?.close(id, now);
    await this.reportHead(id);
  }

  async settleHead(id: string, expectedTurn: number, state: unknown, end: { stopReason: string; truncated: boolean } | null, now: number): Promise<boolean> {
    const settled = (await (await this.open(false))?.settleHead(id, expectedTurn, state, end, now)) ?? false;
    if (settled) await this.reportHead(id);
    return settled;
  }

  /**
   * Forks made from this episode's turns: each id is asked, at this episode's expiry,
   * whether it still needs them. One key per fork (`holder:<id>`), so any number of forks
   * fits (one storage value is limited to 2 MB) and a retried fork adds no duplicate.
   */
  async hold(forkIds: string[]): Promise<void> {
    for (let i = 0; i < forkIds.length; i += KEYS_PER_PUT) {
      await this.storage.put(Object.fromEntries(forkIds.slice(i, i + KEYS_PER_PUT).map((id) => [holderKey(id), true])));
    }
  }

  /**
   * Episodes forked from this one (its direct children), for GET …/forks. Each is a key
   * `child:<created_at, 15 digits>:<id>`, so the object's sorted key space pages them in
   * (created_at, id) order with no table and no migration. A retried fork whose first try
   * listed its ids already keeps that try's time (`child-at:<id>`, read back here), so a
   * child is listed once; the answer is the time the ids are listed under, which the forks'
   * rows take as their created_at so that the list and the rows agree.
   */
  async addChildren(ids: string[], createdAt: number): Promise<number> {
    const known = await this.storage.get<number>(ids.slice(0, KEYS_PER_PUT).map(childAtKey));
    const at = [...known.values()][0] ?? createdAt;
    for (let i = 0; i < ids.length; i += KEYS_PER_PUT / 2) {
      const part = ids.slice(i, i + KEYS_PER_PUT / 2);
      await this.storage.put(Object.fromEntries(part.flatMap((id) => [[childKey(at, id), true], [childAtKey(id), at]])));
    }
    return at;
  }

  /** Up to `limit` children after `after`, oldest first. */
  async children(after: { createdAt: number; id: string } | null, limit: number): Promise<{ id: string; createdAt: number }[]> {
    const page = await this.storage.list({ prefix: "child:", limit, ...(after ? { startAfter: childKey(after.createdAt, after.id) } : {}) });
    return [...page.keys()].map((key) => {
      const [, at = "0", ...id] = key.split(":");
      return { id: id.join(":"), createdAt: Number(at) };
    });
  }

  /** Whether this episode is unexpired (a fork's answer to an ancestor at its expiry). */
  async isLive(now: number): Promise<boolean> {
    const head = (await this.open(false)) ? this.storage.sql.exec("SELECT status, expires_at FROM episodes LIMIT 1").toArray()[0] : undefined;
    return head !== undefined && head.status !== "expired" && Number(head.expires_at) > now;
  }

  /**
   * Whether a fork still needs this episode's turns: the `holder:` keys are asked
   * HOLDERS_PER_ROUND at a time, the gone ones deleted, until a live one answers. "more"
   * when HOLDER_ROUNDS_PER_ALARM rounds found none live and some are left to ask: the
   * alarm comes back for them, so one alarm's fan-out stays bounded however many forks.
   */
  private async holdersLive(now: number): Promise<"live" | "none" | "more"> {
    await this.upgradeHolders();
    const ns = this.env.EPISODES;
    for (let round = 0; round < HOLDER_ROUNDS_PER_ALARM; round++) {
      const keys = [...(await this.storage.list({ prefix: "holder:", limit: HOLDERS_PER_ROUND })).keys()];
      if (keys.length === 0) return "none";
      const live = await Promise.all(keys.map((k) => (ns.get(ns.idFromName(k.slice("holder:".length))) as unknown as EpisodeObject).isLive(now)));
      await this.storage.delete(keys.filter((_, j) => !live[j]));
      if (live.some(Boolean)) return "live";
    }
    return (await this.storage.list({ prefix: "holder:", limit: 1 })).size > 0 ? "more" : "none";
  }

  /** An object written before holders had a key each kept them as one array under "holders": moved to keys once. */
  private async upgradeHolders(): Promise<void> {
    const legacy = await this.storage.get<string[]>("holders");
    if (legacy === undefined) return;
    await this.hold([...new Set(legacy)]);
    await this.storage.delete("holders");
  }

  /** Expiry (TTL passed: tombstone, turns dropped unless a live fork holds them), then deletion a week later. */
  async alarm(): Promise<void> {
    const now = Date.now();
    if (!(await this.open(false))) return;
    const head = this.storage.sql.exec("SELECT id, status, expires_at, updated_at FROM episodes LIMIT 1").toArray()[0];
    if (!head) {
      await this.storage.deleteAll();
      return;
    }
    const id = String(head.id);
    const expiresAt = Number(head.expires_at);
    if (head.status !== "expired") {
      // Steps and scores moved the expiry on: sleep until then.
      if (expiresAt > now) return this.storage.setAlarm(expiresAt);
      this.storage.sql.exec("UPDATE episodes SET status = 'expired', state = NULL, metadata = '{}', stored_bytes = 0, updated_at = ? WHERE id = ?", now, id);
      // Drops the cached head with the store: a step must now find the tombstone.
      this.store = null;
      this.reported = null;
      await this.report({ id, status: "expired", storedBytes: 0, expiresAt, ttlSeconds: 0 }, true);
    }
    const holders = await this.holdersLive(now);
    if (holders === "more") {
      // Forks left to ask: keep the turns and ask them in the next alarm, soon.
      await this.storage.setAlarm(now + HOLDER_CONTINUE_MS);
      return;
    }
    const held = holders === "live";
    if (!held) this.storage.sql.exec("DELETE FROM episode_turns");
    if (expiresAt + TOMBSTONE_MS <= now && !held) {
      // The index drops its entry on the reaper's next run; the object's storage goes now.
      await this.storage.deleteAll();
      this.store = null;
      return;
    }
    await this.storage.setAlarm(held ? Math.min(now + HOLD_RECHECK_MS, expiresAt + TOMBSTONE_MS) : expiresAt + TOMBSTONE_MS);
  }
}
