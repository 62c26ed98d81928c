import type { DurableObjectNamespace } from "@cloudflare/workers-types/index.ts";
import type { ForkChild, ForkCursor, ForkHead, ForkPoint, LineageEntry, StepRow, StepWrite, TenantUsage, TurnRecord, TurnSegment } from "../../db/episode-store.js";
import type { EpisodeRow, NewEpisodeRow } from "../../db/schema.js";
import type { EpisodeStorage } from "../../db/stores.js";
import type { IndexEntry } from "./index-entries.js";

/** The episode object's RPC methods, as the Worker calls them (typed here so this file imports no runtime module). */
interface EpisodeObjectRpc {
  insert(row: NewEpisodeRow, opening: unknown[]): Promise<{ row: EpisodeRow; created: boolean }>;
  insertFork(base: NewEpisodeRow, lineage: LineageEntry[]): Promise<boolean>;
  get(id: string): Promise<EpisodeRow | undefined>;
  getForStep(id: string, turn?: number): Promise<StepRow | undefined>;
  turnForRetry(id: string, turn: number): Promise<{ message: unknown; reply: string | null } | undefined>;
  lineage(id: string): Promise<LineageEntry[]>;
  readTurns(segments: TurnSegment[]): Promise<TurnRecord[]>;
  forkPoint(id: string, turn: number): Promise<ForkPoint | undefined>;
  commitStep(w: StepWrite): Promise<boolean>;
  saveScore(id: string, score: unknown, now: number, expiresAt: number): Promise<void>;
  replaceScore(id: string, expectedTurn: number, score: unknown, now: number, expiresAt: number): Promise<boolean>;
  close(id: string, now: number): Promise<void>;
  settleHead(id: string, expectedTurn: number, state: unknown, end: { stopReason: string; truncated: boolean } | null, now: number): Promise<boolean>;
  hold(forkIds: string[]): Promise<void>;
  addChildren(ids: string[], createdAt: number): Promise<number>;
  children(after: ForkCursor | null, limit: number): Promise<{ id: string; createdAt: number }[]>;
}

/** The index object's RPC methods (episode-index-object.ts). */
interface EpisodeIndexRpc {
  claim(entries: IndexEntry[]): Promise<{ claimed: boolean; ids: string[] }>;
  idsByKeys(keys: string[]): Promise<string[]>;
  usage(tenant: string, now: number): Promise<TenantUsage>;
  reap(now: number): Promise<number>;
}

const entryOf = (row: NewEpisodeRow): IndexEntry => ({
  id: row.id,
  tenant: row.tenant ?? "default",
  idempotencyKey: row.idempotencyKey ?? null,
  status: row.status,
  storedBytes: row.storedBytes ?? 0,
  expiresAt: row.expiresAt,
});

/**
 * Episodes on Cloudflare, one SQLite-backed Durable Object each (episode-object.ts): every
 * call about one episode goes to its object, named by the episode id, so steps of
 * different episodes never wait on each other or on a shared database. A fork's
 * transcript is read from its ancestors' objects. What spans episodes (idempotency keys,
 * tenant usage, the reaper's bookkeeping) is in one index object
 * (episode-index-object.ts), which a reset, a fork or a status change writes and an
 * ordinary step does not.
 */
export class DurableEpisodeStore implements EpisodeStorage {
  constructor(
    private readonly episodes: DurableObjectNamespace,
    private readonly indexNamespace: DurableObjectNamespace,
  ) {}

  private object(id: string): EpisodeObjectRpc {
    return this.episodes.get(this.episodes.idFromName(id)) as unknown as EpisodeObjectRpc;
  }

  private get index(): EpisodeIndexRpc {
    return this.indexNamespace.get(this.indexNamespace.idFromName("index")) as unknown as EpisodeIndexRpc;
  }

  /**
   * The index claims the key first, then the episode's object stores the row. A retry that
   * finds the key claimed but no episode (the claimant failed in between) stores its row
   * under the claimed id: the object takes the first insert, so either way one episode.
   */
  async insert(row: NewEpisodeRow, opening: unknown[]): Promise<{ row: EpisodeRow; created: boolean }> {
    const { claimed, ids } = await this.index.claim([entryOf(row)]);
    if (claimed) return this.object(row.id).insert(row, opening);
    const id = ids[0] ?? "";
    if (id === "") throw new Error("episode index refused a claim without naming the holder");
    const existing = await this.object(id).get(id);
    if (existing) return { row: existing, created: false };
    return this.object(id).insert({ ...row, id }, opening);
  }

  /**
   * The index claims the forks' keys, all or none, then the ancestors learn of the forks,
   * then each fork's object stores its row. A keyed retry that finds its keys claimed by a
   * try that failed in between (some fork objects hold no row) stores the missing forks
   * under the claimed ids, as `insert` does for a reset, unless a row there has another
   * body (the service then answers 409). It answers none inserted: the service reads the
   * forks back by their keys and replays them.
   */
  async insertForks(base: NewEpisodeRow, forks: ForkHead[], lineage: LineageEntry[]): Promise<string[]> {
    const rows = forks.map((f) => ({ ...base, id: f.id, idempotencyKey: f.idempotencyKey, ...(f.state === undefined ? {} : { state: f.state }) }));
    const { claimed, ids } = await this.index.claim(rows.map(entryOf));
    if (claimed) return this.place(base, rows, lineage);
    // Some keys free: another request's keys (a different n), which the service refuses.
    if (ids.some((id) => id === "")) return [];
    const existing = await Promise.all(ids.map((id) => this.object(id).get(id)));
    if (existing.some((r) => r !== undefined && r.requestHash !== base.requestHash)) return [];
    if (existing.every((r) => r !== undefined)) return [];
    await this.place(base, rows.map((r, i) => ({ ...r, id: ids[i] ?? r.id })), lineage);
    return [];
  }

  /**
   * Stores claimed forks. The ancestors learn of them before they exist (an ancestor
   * expiring meanwhile keeps its turns), then the parent lists them; both are idempotent,
   * so a retry may run this again. Each object takes the first insert of its row.
   */
  private async place(base: NewEpisodeRow, rows: NewEpisodeRow[], lineage: LineageEntry[]): Promise<string[]> {
    const ids = rows.map((r) => r.id);
    await Promise.all(lineage.map((l) => this.object(l.ancestorId).hold(ids)));
    // A retry's forks keep the time the first try listed them under.
    const createdAt = base.parentId ? await this.object(base.parentId).addChildren(ids, base.createdAt) : base.createdAt;
    const inserted = await Promise.all(rows.map((r) => this.object(r.id).insertFork({ ...r, createdAt }, lineage)));
    return ids.filter((_, i) => inserted[i]);
  }

  get(id: string): Promise<EpisodeRow | undefined> {
    return this.object(id).get(id);
  }

  /**
   * A page of the parent's children from its object's list, each read from its own object
   * (at most `limit` reads, in parallel). A child whose object holds no row (deleted a week
   * after expiry, or its insert failed after the parent learned of it) is left out, as is
   * another tenant's (forks belong to their parent's tenant, so none should be).
   */
  async forksOf(parentId: string, tenant: string | null, limit: number, after: ForkCursor | null): Promise<ForkChild[]> {
    const listed = await this.object(parentId).children(after, limit);
    const rows = await Promise.all(listed.map((c) => this.object(c.id).get(c.id)));
    return rows.flatMap((r): ForkChild[] =>
      r && r.parentId === parentId && (tenant === null || r.tenant === tenant)
        ? [{ id: r.id, forkTurn: r.forkTurn ?? 0, turn: r.turn, status: r.status, reward: (r.score as { reward?: number } | null)?.reward ?? null, createdAt: r.createdAt, expiresAt: r.expiresAt }]
        : [],
    );
  }

  async getByIdempotencyKeys(keys: string[]): Promise<EpisodeRow[]> {
    if (keys.length === 0) return [];
    const ids = (await this.index.idsByKeys(keys)).filter((id) => id !== "");
    const rows = await Promise.all(ids.map((id) => this.object(id).get(id)));
    return rows.filter((r): r is EpisodeRow => r !== undefined);
  }

  getForStep(id: string, turn?: number): Promise<StepRow | undefined> {
    return this.object(id).getForStep(id, turn);
  }

  turnForRetry(id: string, turn: number): Promise<{ message: unknown; reply: string | null } | undefined> {
    return this.object(id).turnForRetry(id, turn);
  }

  lineage(id: string): Promise<LineageEntry[]> {
    return this.object(id).lineage(id);
  }

  /** Each segment from its own episode's object, in parallel, concatenated in order. */
  async readTurns(segments: TurnSegment[]): Promise<TurnRecord[]> {
    const parts = await Promise.all(segments.map((s) => (s.from > s.to ? [] : this.object(s.episodeId).readTurns([s]))));
    return parts.flat();
  }

  forkPoint(episodeId: string, turn: number): Promise<ForkPoint | undefined> {
    return this.object(episodeId).forkPoint(episodeId, turn);
  }

  commitStep(w: StepWrite): Promise<boolean> {
    return this.object(w.id).commitStep(w);
  }

  usage(tenant: string, now: number): Promise<TenantUsage> {
    return this.index.usage(tenant, now);
  }

  saveScore(id: string, score: unknown, now: number, expiresAt: number): Promise<void> {
    return this.object(id).saveScore(id, score, now, expiresAt);
  }

  replaceScore(id: string, expectedTurn: number, score: unknown, now: number, expiresAt: number): Promise<boolean> {
    return this.object(id).replaceScore(id, expectedTurn, score, now, expiresAt);
  }

  close(id: string, now: number): Promise<void> {
    return this.object(id).close(id, now);
  }

  settleHead(id: string, expectedTurn: number, state: unknown, end: { stopReason: string; truncated: boolean } | null, now: number): Promise<boolean> {
    return this.object(id).settleHead(id, expectedTurn, state, end, now);
  }

  /**
   * Episodes expire by their own alarms (episode-object.ts), so the cron only drops the
   * index entries of episodes past their tombstone week: `expired` is always 0 here.
   */
  async reapExpired(now: number): Promise<{ expired: number; deleted: number }> {
    return { expired: 0, deleted: await this.index.reap(now) };
  }
}
