import { and, asc, between, eq, getTableColumns, inArray, sql } from "drizzle-orm";
import { atomicRunner, type AtomicRunner, type EdgegymDb, type SqlStatement, type SqlValue } from "./database.js";
import { EpisodeLifecycle } from "./episode-lifecycle.js";
import { sqliteEngine } from "./sql-engine.js";
import { StepHeadCache } from "./step-head-cache.js";
import { episodeLineage, episodes, episodeTurns, type EpisodeRow, type NewEpisodeRow } from "./schema.js";

/** Every column of an episode row: drizzle name → SQL name. */
const EPISODE_COLUMNS = Object.entries(getTableColumns(episodes)).map(([key, column]) => ({ key: key as keyof NewEpisodeRow, name: column.name }));

/** Columns stored as JSON text: the raw inserts encode them as drizzle's json mode would. */
const JSON_COLUMNS = new Set<keyof NewEpisodeRow>(["args", "metadata", "state", "score", "templateChanges", "stopTallies"]);

/** Column defaults (tenant, stored_bytes, template_changes): an insert binds every column, so an omitted one would bind null. */
const COLUMN_DEFAULTS = Object.fromEntries(Object.entries(getTableColumns(episodes)).map(([k, c]) => [k, c.default ?? null])) as Record<keyof NewEpisodeRow, unknown>;

/**
 * A column's value as SQLite stores it. SQL NULL stays NULL (an unscored episode is told
 * apart by `score IS NULL`); JSON columns are text; booleans are 0/1.
 */
function encode(key: keyof NewEpisodeRow, value: unknown): SqlValue {
  if (value === null || value === undefined) return null;
  if (JSON_COLUMNS.has(key)) return JSON.stringify(value);
  if (typeof value === "boolean") return value ? 1 : 0;
  return value as SqlValue;
}

const INSERT_EPISODE = `INSERT INTO episodes (${EPISODE_COLUMNS.map((c) => `"${c.name}"`).join(", ")}) VALUES (${EPISODE_COLUMNS.map(() => "?").join(", ")}) ON CONFLICT DO NOTHING RETURNING id`;

const TURN_COLUMNS = "episode_id, turn, message, reply_messages, reply, state, done, sampled, template_hash, stop_tallies, created_at";

/**
 * A turn row guarded by the head: written only while the episode is where the step found it.
 * `OR FAIL` on both of a step's writes: each writes one row, whose constraints SQLite checks
 * before writing it, so FAIL undoes exactly what the default ABORT would (nothing), but it
 * spares SQLite the statement journal ABORT keeps inside a multi-statement transaction (a
 * group commit): a copy of every page the statement touches, memmove'd before the change.
 */
const INSERT_TURN = `INSERT OR FAIL INTO episode_turns (${TURN_COLUMNS})
  SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
  WHERE EXISTS (SELECT 1 FROM episodes WHERE id = ? AND turn = ? AND status = 'active' AND stored_bytes + ? <= ?)
  ON CONFLICT DO NOTHING`;

/** The head's move, under the same guard: inside one batch both statements see the same head, so both apply or neither. */
const UPDATE_HEAD = `UPDATE OR FAIL episodes SET turn = ?, state = ?, status = ?, stop_reason = ?, truncated = ?, error = ?, updated_at = ?, expires_at = ?,
  stored_bytes = stored_bytes + ?, template_hash = ?, template_changes = coalesce(?, template_changes), stop_tallies = ?
  WHERE id = ? AND turn = ? AND status = 'active' AND stored_bytes + ? <= ?`;

export { TOMBSTONE_MS } from "./reaper.js";
export type { TenantUsage } from "./episode-lifecycle.js";

/**
 * What a step reads: the head without the metadata, score and idempotency columns. Nothing
 * in it grows with the transcript.
 */
const { metadata: _metadata, score: _score, scoredAt: _scoredAt, idempotencyKey: _key, requestHash: _hash, ...STEP_COLUMNS } = getTableColumns(episodes);
export type StepRow = Omit<EpisodeRow, "metadata" | "score" | "scoredAt" | "idempotencyKey" | "requestHash">;

/** One stored turn as the transcript readers need it. */
export interface TurnRecord {
  turn: number;
  message: unknown;
  replyMessages: unknown[];
  sampled: unknown;
  /** When the turn was stored (ms since the epoch): reset for turn 0, its step otherwise. */
  createdAt: number;
  /** A harness episode's model call that made the turn (the reply body's `call`); absent otherwise. */
  call?: unknown;
}

/** A stretch of one episode's turn rows: a fork's transcript is its ancestors' stretches, then its own. */
export interface TurnSegment {
  episodeId: string;
  from: number;
  to: number;
}

/** An ancestor in a fork's prefix, and the last of its turns the prefix holds. */
export interface LineageEntry {
  ancestorId: string;
  toTurn: number;
}

/** One fork's own columns; every other column comes from the shared base row. */
export interface ForkHead {
  id: string;
  idempotencyKey: string | null;
  /** The fork's own state (a sandboxed fork names its own container); absent: the base's. */
  state?: unknown;
}

export interface StepWrite {
  id: string;
  /** The head the step was computed from: with this write applied it is the next step's head, kept in the step-head cache. */
  before?: StepRow;
  /** `state` as JSON text, when the caller has it already (it is written twice: turn row and head). */
  stateJson?: string;
  /** The turn the episode must still be at: the optimistic-concurrency check. */
  expectedTurn: number;
  turn: number;
  state: unknown;
  /** This turn's assistant message (and as JSON text, when the caller has it already). */
  message: unknown;
  messageJson?: string;
  /** This step's response body, stored for byte-exact retries; its `messages` are the turn's reply unless `replyMessagesJson` is given. */
  reply: string;
  /** The turn's reply as the log keeps it, when it differs from what the response showed (a seated episode's: every seat's messages). */
  replyMessagesJson?: string | null;
  sampled: unknown;
  templateHash: string | null;
  /** The head's template changes with this step's appended, or null to leave them. */
  templateChanges: unknown[] | null;
  /** The stop conditions' running totals after this turn (null when none keeps one). */
  tallies: number[] | null;
  status: "active" | "done";
  stopReason: string | null;
  truncated: boolean;
  error: string | null;
  now: number;
  expiresAt: number;
  /** What this step adds to the row's stored_bytes (its turn row). */
  addedBytes: number;
  /** The episode's byte quota: the step is not applied when stored_bytes + addedBytes would pass it. */
  maxEpisodeBytes: number;
}

/** Where a page of forks starts: after this (created_at, id). */
export interface ForkCursor {
  createdAt: number;
  id: string;
}

/** One fork as GET /v1/episodes/{id}/forks lists it. */
export interface ForkChild {
  id: string;
  forkTurn: number;
  turn: number;
  status: EpisodeRow["status"];
  reward: number | null;
  createdAt: number;
  expiresAt: number;
}

/** What a fork needs of the turn it starts from. */
export interface ForkPoint {
  /** Null when the state after that turn was not stored (turns migrated from before per-turn storage). */
  state: unknown;
  stateStored: boolean;
  done: boolean;
  templateHash: string | null;
  tallies: number[] | null;
}

/**
 * Episode persistence. Every write that races with another is guarded in SQL (a
 * conditional statement, or an atomic batch whose statements share one guard), and its
 * RETURNING tells the caller whether it won.
 */
export class EpisodeStore extends EpisodeLifecycle {
  // The queries on the reset and step paths are prepared once, on first use: building
  // and preparing SQL on every request cost more server time than SQLite itself
  // (measured with --cpu-prof; preparing the 25-column insert alone was 4% of the
  // server's CPU in the step benchmark, one reset per twenty steps).
  private prepared?: ReturnType<EpisodeStore["prepare"]>;
  private runner?: AtomicRunner;
  /** Heads this process just wrote: the next step of an episode skips reading its row (step-head-cache.ts says why that is safe). */
  private readonly heads = new StepHeadCache<StepRow>();

  constructor(private readonly db: EdgegymDb) {
    super(sqliteEngine(db));
  }

  /** Made on first use, like the prepared statements (building the app touches no database). */
  private get atomic(): AtomicRunner {
    this.runner ??= atomicRunner(this.db);
    return this.runner;
  }

  private prepare() {
    const p = sql.placeholder;
    const db = this.db;
    return {
      // No .limit(1): the id is the primary key, and drizzle binds a limit as a parameter
      // (`LIMIT ?`), which makes SQLite 3.54 re-prepare the statement on every run
      // (sqlite3Reprepare was 7% of a step's server CPU; docs/performance.md).
      selectById: db.select().from(episodes).where(eq(episodes.id, p("id"))).prepare(),
      selectForStep: db.select(STEP_COLUMNS).from(episodes).where(eq(episodes.id, p("id"))).prepare(),
      selectTurnForRetry: db
        .select({ message: episodeTurns.message, reply: episodeTurns.reply })
        .from(episodeTurns)
        .where(and(eq(episodeTurns.episodeId, p("id")), eq(episodeTurns.turn, p("turn"))))
        .prepare(),
    };
  }

  private get statements(): ReturnType<EpisodeStore["prepare"]> {
    this.prepared ??= this.prepare();
    return this.prepared;
  }

  private headParams(row: NewEpisodeRow): SqlValue[] {
    return EPISODE_COLUMNS.map(({ key }) => encode(key, row[key] ?? COLUMN_DEFAULTS[key]));
  }

  /**
   * Inserts a new episode and its turn 0 (the opening messages) together; with an
   * idempotency key already used, inserts nothing and returns the earlier row instead.
   */
  async insert(row: NewEpisodeRow, opening: unknown[]): Promise<{ row: EpisodeRow; created: boolean }> {
    const [inserted] = await this.atomic.run([
      { sql: INSERT_EPISODE, params: this.headParams(row) },
      {
        sql: `INSERT INTO episode_turns (${TURN_COLUMNS}) SELECT ?, 0, NULL, ?, NULL, ?, 0, NULL, NULL, ?, ? WHERE EXISTS (SELECT 1 FROM episodes WHERE id = ?) ON CONFLICT DO NOTHING`,
        params: [row.id, JSON.stringify(opening), encode("state", row.state), encode("stopTallies", row.stopTallies), row.createdAt, row.id],
      },
    ]);
    if (inserted?.length) {
      const stored = Object.fromEntries(EPISODE_COLUMNS.map(({ key }) => [key, row[key] ?? COLUMN_DEFAULTS[key]])) as EpisodeRow;
      const { metadata: _m, score: _s, scoredAt: _a, idempotencyKey: _k, requestHash: _h, ...head } = stored;
      this.keepHead(head, encode("state", stored.state));
      return { row: stored, created: true };
    }
    if (row.idempotencyKey == null) throw new Error(`episode id collision on ${row.id}`);
    const existing = await this.db.select().from(episodes).where(eq(episodes.idempotencyKey, row.idempotencyKey)).limit(1);
    if (!existing[0]) throw new Error("idempotency key conflict without a row");
    return { row: existing[0], created: false };
  }

  /**
   * Inserts forks: one head per id (all other columns shared), each with the same
   * lineage rows, in one atomic batch of two statements whatever `n` is. Returns the ids
   * inserted: none when the idempotency keys were taken (a replay or a racing twin).
   */
  async insertForks(base: NewEpisodeRow, forks: ForkHead[], lineage: LineageEntry[]): Promise<string[]> {
    const shared = EPISODE_COLUMNS.filter((c) => c.key !== "id" && c.key !== "idempotencyKey" && c.key !== "state");
    // The state is per fork (a sandboxed fork names its own container), the rest shared.
    const sqlText = `INSERT INTO episodes (id, idempotency_key, state, ${shared.map((c) => `"${c.name}"`).join(", ")})
      SELECT json_extract(f.value, '$[0]'), json_extract(f.value, '$[1]'), json_extract(f.value, '$[2]'), ${shared.map(() => "?").join(", ")} FROM json_each(?) AS f WHERE true
      ON CONFLICT DO NOTHING RETURNING id`;
    const heads = forks.map((f) => [f.id, f.idempotencyKey, encode("state", f.state === undefined ? base.state : f.state)]);
    const [inserted] = await this.atomic.run([
      { sql: sqlText, params: [...shared.map(({ key }) => encode(key, base[key] ?? COLUMN_DEFAULTS[key])), JSON.stringify(heads)] },
      {
        // Lineage only for the heads this batch inserted (a replayed key inserts no head).
        sql: `INSERT INTO episode_lineage (episode_id, ancestor_id, to_turn)
          SELECT f.value, json_extract(a.value, '$[0]'), json_extract(a.value, '$[1]') FROM json_each(?) AS f, json_each(?) AS a
          WHERE EXISTS (SELECT 1 FROM episodes e WHERE e.id = f.value) ON CONFLICT DO NOTHING`,
        params: [JSON.stringify(forks.map((f) => f.id)), JSON.stringify(lineage.map((l) => [l.ancestorId, l.toTurn]))],
      },
    ]);
    return (inserted ?? []).map((r) => String(r.id));
  }

  async get(id: string): Promise<EpisodeRow | undefined> {
    const rows: EpisodeRow[] = await this.statements.selectById.all({ id });
    return rows[0];
  }

  /** Rows by idempotency key, in the order of `keys` (missing ones left out). */
  async getByIdempotencyKeys(keys: string[]): Promise<EpisodeRow[]> {
    if (keys.length === 0) return [];
    const rows = await this.db.select().from(episodes).where(inArray(episodes.idempotencyKey, keys));
    const byKey = new Map(rows.map((r) => [r.idempotencyKey, r]));
    return keys.flatMap((k) => byKey.get(k) ?? []);
  }

  /**
   * The head as a step needs it (no metadata or score). With `turn`, the head this process
   * wrote at that turn is answered from memory when it has it.
   */
  async getForStep(id: string, turn?: number): Promise<StepRow | undefined> {
    if (turn !== undefined) {
      const cached = this.heads.get(id, turn);
      if (cached) return cached;
    }
    const rows: StepRow[] = await this.statements.selectForStep.all({ id });
    return rows[0];
  }

  /**
   * Keeps a head as the row would read back: the state is parsed from the JSON text
   * written, so a cached step sees exactly what a read would give (no `undefined` fields,
   * no class instances the environment returned), and shares no object with anyone.
   */
  private keepHead(head: StepRow, stateJson: SqlValue): void {
    if (head.status === "active" && (stateJson === null || (typeof stateJson === "string" && stateJson.length <= this.heads.maxStateChars))) {
      this.heads.set(head.id, { ...head, state: typeof stateJson === "string" ? (JSON.parse(stateJson) as unknown) : null });
    } else this.heads.delete(head.id);
  }

  /** The stored message and response body of one turn, for a retry. */
  async turnForRetry(id: string, turn: number): Promise<{ message: unknown; reply: string | null } | undefined> {
    const rows: { message: unknown; reply: string | null }[] = await this.statements.selectTurnForRetry.all({ id, turn });
    return rows[0];
  }

  /** A fork's ancestors, oldest first (empty for an episode started by reset). */
  async lineage(id: string): Promise<LineageEntry[]> {
    return this.db
      .select({ ancestorId: episodeLineage.ancestorId, toTurn: episodeLineage.toTurn })
      .from(episodeLineage)
      .where(eq(episodeLineage.episodeId, id))
      .orderBy(asc(episodeLineage.toTurn));
  }

  /**
   * Up to `limit` episodes forked from `parentId`, in (created_at, id) order after `after`:
   * one range of the index episodes_parent. With `tenant`, only that tenant's rows are read
   * (the filter is in the query, so another tenant's forks never leave the database).
   */
  async forksOf(parentId: string, tenant: string | null, limit: number, after: ForkCursor | null): Promise<ForkChild[]> {
    return this.db
      .select({
        id: episodes.id,
        forkTurn: sql<number>`coalesce(${episodes.forkTurn}, 0)`,
        turn: episodes.turn,
        status: episodes.status,
        // The reward alone, cut out by SQLite: a score's components and metrics stay in the row.
        reward: sql<number | null>`json_extract(${episodes.score}, '$.reward')`,
        createdAt: episodes.createdAt,
        expiresAt: episodes.expiresAt,
      })
      .from(episodes)
      .where(
        and(
          eq(episodes.parentId, parentId),
          tenant === null ? undefined : eq(episodes.tenant, tenant),
          after === null ? undefined : sql`(${episodes.createdAt}, ${episodes.id}) > (${after.createdAt}, ${after.id})`,
        ),
      )
      .orderBy(asc(episodes.createdAt), asc(episodes.id))
      .limit(limit);
  }

  /** The turn rows of the segments, in order: one range read of the primary key per segment. */
  async readTurns(segments: TurnSegment[]): Promise<TurnRecord[]> {
    const out: TurnRecord[] = [];
    for (const s of segments) {
      if (s.from > s.to) continue;
      const rows = await this.db
        .select({
          turn: episodeTurns.turn,
          message: episodeTurns.message,
          // SQLite cuts the reply's messages out of the stored body: no parse of the whole body in JavaScript.
          replyMessages: sql<string>`coalesce(${episodeTurns.replyMessages}, json_extract(${episodeTurns.reply}, '$.messages'), '[]')`,
          sampled: episodeTurns.sampled,
          createdAt: episodeTurns.createdAt,
          // Only harness turns' bodies have a call: the substring test spares every other turn a second parse.
          call: sql<string | null>`CASE WHEN instr(${episodeTurns.reply}, '"call":') > 0 THEN json_extract(${episodeTurns.reply}, '$.call') END`,
        })
        .from(episodeTurns)
        .where(and(eq(episodeTurns.episodeId, s.episodeId), between(episodeTurns.turn, s.from, s.to)))
        .orderBy(asc(episodeTurns.turn));
      for (const { call, ...r } of rows) out.push({ ...r, replyMessages: JSON.parse(r.replyMessages) as unknown[], ...(call == null ? {} : { call: JSON.parse(call) as unknown }) });
    }
    return out;
  }

  /** The state (and end flag, template hash) after one turn of one episode's own rows. */
  async forkPoint(episodeId: string, turn: number): Promise<ForkPoint | undefined> {
    const [row] = await this.db
      .select({ state: episodeTurns.state, missing: sql<number>`${episodeTurns.state} IS NULL`, done: episodeTurns.done, templateHash: episodeTurns.templateHash, tallies: episodeTurns.stopTallies })
      .from(episodeTurns)
      .where(and(eq(episodeTurns.episodeId, episodeId), eq(episodeTurns.turn, turn)));
    if (!row) return undefined;
    return { state: row.state, stateStored: Number(row.missing) === 0, done: row.done, templateHash: row.templateHash, tallies: row.tallies };
  }

  /**
   * Applies a step if the episode is still active at `expectedTurn` and within its byte
   * quota: the turn row and the head's move in one atomic batch. False when another
   * write got there first (or the quota refused it); then nothing was written.
   */
  async commitStep(w: StepWrite): Promise<boolean> {
    const guard: SqlValue[] = [w.id, w.expectedTurn, w.addedBytes, w.maxEpisodeBytes];
    const stateJson = w.stateJson ?? JSON.stringify(w.state ?? null);
    const statements: SqlStatement[] = [
      {
        sql: INSERT_TURN,
        params: [
          w.id,
          w.turn,
          w.messageJson ?? JSON.stringify(w.message),
          // Read back from the reply body (`messages`), not stored twice, unless the log holds more than the reply showed (a seated episode's).
          w.replyMessagesJson ?? null,
          w.reply,
          stateJson,
          w.status === "done" ? 1 : 0,
          w.sampled == null ? null : JSON.stringify(w.sampled),
          w.templateHash,
          w.tallies === null ? null : JSON.stringify(w.tallies),
          w.now,
          ...guard,
        ],
      },
      {
        sql: UPDATE_HEAD,
        count: true,
        params: [
          w.turn,
          stateJson,
          w.status,
          w.stopReason,
          w.truncated ? 1 : 0,
          w.error,
          w.now,
          w.expiresAt,
          w.addedBytes,
          w.templateHash,
          w.templateChanges === null ? null : JSON.stringify(w.templateChanges),
          w.tallies === null ? null : JSON.stringify(w.tallies),
          ...guard,
        ],
      },
    ];
    let won = false;
    try {
      const [, updated] = await this.atomic.run(statements);
      won = Number(updated?.[0]?.changes ?? 0) === 1;
    } finally {
      if (won && w.before) {
        const b = w.before;
        this.keepHead(
          {
            ...b,
            turn: w.turn,
            state: w.state,
            status: w.status,
            stopReason: w.stopReason,
            truncated: w.truncated,
            error: w.error,
            updatedAt: w.now,
            expiresAt: w.expiresAt,
            storedBytes: b.storedBytes + w.addedBytes,
            templateHash: w.templateHash,
            templateChanges: (w.templateChanges as StepRow["templateChanges"] | null) ?? b.templateChanges,
            stopTallies: w.tallies,
          },
          stateJson,
        );
      } else this.heads.delete(w.id);
    }
    return won;
  }

  protected forgetHead(id: string): void {
    this.heads.delete(id);
  }
}
