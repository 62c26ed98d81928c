import { and, asc, between, eq, getTableColumns, inArray, sql } from "drizzle-orm";
import type { Pool } from "pg";
import type { EpisodeStorage } from "../stores.js";
import type { ForkChild, ForkCursor, ForkHead, ForkPoint, LineageEntry, StepRow, StepWrite, TurnRecord, TurnSegment } from "../episode-store.js";
import { EpisodeLifecycle } from "../episode-lifecycle.js";
import type { EpisodeRow, NewEpisodeRow } from "../schema.js";
import { StepHeadCache } from "../step-head-cache.js";
import { pgEngine } from "./engine.js";
import { pgText } from "./text.js";
import type { PgDb } from "./open.js";
import { episodeLineage, episodes, episodeTurns } from "./schema.js";

type Param = string | number | boolean | null;

const COLUMNS = getTableColumns(episodes);
/** Every column of an episode row: drizzle key, SQL name, SQL type (for casts in INSERT … SELECT). */
const EPISODE_COLUMNS = Object.entries(COLUMNS).map(([key, column]) => ({ key: key as keyof NewEpisodeRow, name: column.name, type: column.getSQLType() }));
const JSON_COLUMNS = new Set<keyof NewEpisodeRow>(["args", "metadata", "state", "score", "templateChanges", "stopTallies"]);
/** Column defaults (tenant, stored_bytes, template_changes): an insert binds every column. */
const COLUMN_DEFAULTS: Partial<Record<keyof NewEpisodeRow, unknown>> = { tenant: "public", storedBytes: 0, templateChanges: [] };

/** A column's value as bound: JSON columns as their text (the columns are text, see schema.ts). */
function encode(key: keyof NewEpisodeRow, value: unknown): Param {
  if (value === null || value === undefined) return null;
  if (JSON_COLUMNS.has(key)) return JSON.stringify(value);
  return value as Param;
}

const TURN_COLUMNS = "episode_id, turn, message, reply_messages, reply, state, done, sampled, template_hash, stop_tallies, created_at";

/**
 * A reset: the head and its turn 0 in one statement (a data-modifying CTE is atomic). The
 * turn row is written only for a head this statement inserted; a taken idempotency key
 * inserts neither, and a racing twin with the same key waits on the key's index entry
 * until the first commits, then inserts nothing.
 */
const INSERT_EPISODE = `WITH head AS (
    INSERT INTO episodes (${EPISODE_COLUMNS.map((c) => `"${c.name}"`).join(", ")}) VALUES (${EPISODE_COLUMNS.map((_, i) => `$${i + 1}`).join(", ")})
    ON CONFLICT DO NOTHING RETURNING id)
  INSERT INTO episode_turns (${TURN_COLUMNS})
  SELECT id, 0, NULL, $${EPISODE_COLUMNS.length + 1}::text, NULL, $${EPISODE_COLUMNS.length + 2}::text, false, NULL, NULL, $${EPISODE_COLUMNS.length + 3}::text, $${EPISODE_COLUMNS.length + 4}::bigint FROM head
  RETURNING episode_id`;

/**
 * A step: the head's guarded move and the turn row in one statement. The UPDATE takes the
 * row lock; a racing step of the same episode waits on it, then re-checks the WHERE on
 * the committed row (READ COMMITTED) and matches nothing, so it inserts no turn either.
 * RETURNING says who won. A turn row that exists already (it cannot while the guard
 * holds) fails the whole statement rather than leave a head without its reply.
 */
const COMMIT_STEP = `WITH head AS (
    UPDATE episodes SET turn = $1::int, state = $2::text, status = $3::text, stop_reason = $4::text, truncated = $5::boolean, error = $6::text,
      updated_at = $7::bigint, expires_at = $8::bigint, stored_bytes = stored_bytes + $9::bigint, template_hash = $10::text,
      template_changes = coalesce($11::text, template_changes), stop_tallies = $12::text
    WHERE id = $13::text AND turn = $14::int AND status = 'active' AND stored_bytes + $9::bigint <= $15::bigint
    RETURNING id)
  INSERT INTO episode_turns (${TURN_COLUMNS})
  SELECT id, $1::int, $16::text, $20::text, $17::text, $2::text, $18::boolean, $19::text, $10::text, $12::text, $7::bigint FROM head
  RETURNING turn`;

/** A stored response body's `messages` ([] without a body or without messages), as SQLite's json_extract reads them. */
function replyMessagesOf(reply: string | null): unknown[] {
  if (reply === null) return [];
  const messages = (JSON.parse(reply) as { messages?: unknown }).messages;
  return Array.isArray(messages) ? messages : [];
}

/** A harness turn's model call, from its reply body (only those bodies have one: cheap to look for first). */
function callOf(reply: string | null): { call?: unknown } {
  if (reply === null || !reply.includes('"call":')) return {};
  const call = (JSON.parse(reply) as { call?: unknown }).call;
  return call == null ? {} : { call };
}

const { metadata: _metadata, score: _score, scoredAt: _scoredAt, idempotencyKey: _key, requestHash: _hash, ...STEP_COLUMNS } = COLUMNS;

/**
 * Episode persistence on PostgreSQL, with the guarantees of the SQLite store
 * (../episode-store.ts): every racing write is guarded in SQL and RETURNING tells the
 * caller whether it won; a step is applied at most once; a retry is answered from the
 * stored reply text (kept as text, byte for byte). Where SQLite needed a fixed batch of
 * guarded statements, a single statement with a data-modifying CTE does the same here.
 */
export class PgEpisodeStore extends EpisodeLifecycle implements EpisodeStorage {
  private readonly heads = new StepHeadCache<StepRow>();
  private prepared?: ReturnType<PgEpisodeStore["prepare"]>;

  constructor(
    private readonly db: PgDb,
    private readonly pool: Pool,
  ) {
    // The lifecycle's shared SQL (../episode-lifecycle.ts, ../reaper.ts): the reaper takes
    // one transaction per batch under an advisory lock, so one process at a time reaps, and
    // skips rows a step holds (SKIP LOCKED) for the next pass: it never waits on, or
    // deadlocks with, a step.
    super(pgEngine(db));
  }

  /** Named prepared statements (node-postgres parses each once per connection). */
  private prepare() {
    const p = sql.placeholder;
    return {
      selectById: this.db.select().from(episodes).where(eq(episodes.id, p("id"))).prepare("edgegym_episode_by_id"),
      selectForStep: this.db.select(STEP_COLUMNS).from(episodes).where(eq(episodes.id, p("id"))).prepare("edgegym_episode_for_step"),
      selectTurnForRetry: this.db
        .select({ message: episodeTurns.message, reply: episodeTurns.reply })
        .from(episodeTurns)
        .where(and(eq(episodeTurns.episodeId, p("id")), eq(episodeTurns.turn, p("turn"))))
        .prepare("edgegym_turn_for_retry"),
    };
  }

  private get statements(): ReturnType<PgEpisodeStore["prepare"]> {
    this.prepared ??= this.prepare();
    return this.prepared;
  }

  private async query(name: string, text: string, values: Param[]): Promise<Record<string, unknown>[]> {
    const result = await this.pool.query({ name, text, values });
    return result.rows as Record<string, unknown>[];
  }

  async insert(row: NewEpisodeRow, opening: unknown[]): Promise<{ row: EpisodeRow; created: boolean }> {
    const head = EPISODE_COLUMNS.map(({ key }) => encode(key, row[key] ?? COLUMN_DEFAULTS[key]));
    const inserted = await this.query("edgegym_insert_episode", INSERT_EPISODE, [...head, JSON.stringify(opening), encode("state", row.state), encode("stopTallies", row.stopTallies), row.createdAt]);
    if (inserted.length > 0) {
      const stored = Object.fromEntries(EPISODE_COLUMNS.map(({ key }) => [key, row[key] ?? COLUMN_DEFAULTS[key] ?? null])) as EpisodeRow;
      const { metadata: _m, score: _s, scoredAt: _a, idempotencyKey: _k, requestHash: _h, ...stepHead } = stored;
      this.keepHead(stepHead, encode("state", stored.state));
      return { row: stored, created: true };
    }
    if (row.idempotencyKey == null) throw new Error(`episode id collision on ${row.id}`);
    const existing = await this.db.select().from(episodes).where(eq(episodes.idempotencyKey, row.idempotencyKey)).limit(1);
    if (!existing[0]) throw new Error("idempotency key conflict without a row");
    return { row: existing[0], created: false };
  }

  async insertForks(base: NewEpisodeRow, forks: ForkHead[], lineage: LineageEntry[]): Promise<string[]> {
    const shared = EPISODE_COLUMNS.filter((c) => c.key !== "id" && c.key !== "idempotencyKey" && c.key !== "state");
    const stateType = EPISODE_COLUMNS.find((c) => c.key === "state")?.type ?? "text";
    const n = shared.length;
    // One statement whatever the number of forks: heads from unnest'ed arrays, and lineage
    // rows only for the heads it inserted (a replayed idempotency key inserts neither).
    const text = `WITH heads AS (
        INSERT INTO episodes (id, idempotency_key, state, ${shared.map((c) => `"${c.name}"`).join(", ")})
        SELECT f.id, f.key, f.state::${stateType}, ${shared.map((c, i) => `$${i + 1}::${c.type}`).join(", ")} FROM unnest($${n + 1}::text[], $${n + 2}::text[], $${n + 5}::text[]) AS f(id, key, state)
        ON CONFLICT DO NOTHING RETURNING id),
      lineage AS (
        INSERT INTO episode_lineage (episode_id, ancestor_id, to_turn)
        SELECT heads.id, a.ancestor_id, a.to_turn FROM heads, unnest($${n + 3}::text[], $${n + 4}::int[]) AS a(ancestor_id, to_turn)
        ON CONFLICT DO NOTHING)
      SELECT id FROM heads`;
    const result = await this.pool.query(text, [
      ...shared.map(({ key }) => encode(key, base[key] ?? COLUMN_DEFAULTS[key])),
      forks.map((f) => f.id),
      forks.map((f) => f.idempotencyKey),
      lineage.map((l) => l.ancestorId),
      lineage.map((l) => l.toTurn),
      // The state is per fork (a sandboxed fork names its own container), the rest shared.
      forks.map((f) => encode("state", f.state === undefined ? base.state : f.state)),
    ]);
    return (result.rows as { id: string }[]).map((r) => r.id);
  }

  /** Up to `limit` forks of `parentId` after `after`, in (created_at, id) order: a range of episodes_parent, the tenant in the query. */
  async forksOf(parentId: string, tenant: string | null, limit: number, after: ForkCursor | null): Promise<ForkChild[]> {
    const rows = await this.db
      .select({
        id: episodes.id,
        forkTurn: sql<number>`coalesce(${episodes.forkTurn}, 0)`,
        turn: episodes.turn,
        status: episodes.status,
        // The score is JSON text here: the reward alone is cut out by PostgreSQL.
        reward: sql<number | null>`(${episodes.score}::jsonb ->> 'reward')::float8`,
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
    return rows.map((r) => ({ ...r, turn: Number(r.turn), forkTurn: Number(r.forkTurn), createdAt: Number(r.createdAt), expiresAt: Number(r.expiresAt), reward: r.reward === null ? null : Number(r.reward) }));
  }

  async get(id: string): Promise<EpisodeRow | undefined> {
    const rows = await this.statements.selectById.execute({ id });
    return rows[0];
  }

  async getByIdempotencyKeys(keys: string[]): Promise<EpisodeRow[]> {
    if (keys.length === 0) return [];
    const rows = await this.db.select().from(episodes).where(inArray(episodes.idempotencyKey, keys));
    const byKey = new Map(rows.map((r) => [r.idempotencyKey, r]));
    return keys.flatMap((k) => byKey.get(k) ?? []);
  }

  /**
   * The head as a step needs it. The cache answers only for a head this process wrote at
   * `turn`; with several processes on one database another may have moved the episode
   * since, and then the step's guarded write loses and the caller re-reads (step-head-cache.ts).
   */
  async getForStep(id: string, turn?: number): Promise<StepRow | undefined> {
    if (turn !== undefined) {
      const cached = this.heads.get(id, turn);
      if (cached) return cached;
    }
    const rows = await this.statements.selectForStep.execute({ id });
    return rows[0];
  }

  private keepHead(head: StepRow, stateJson: Param): void {
    if (head.status === "active" && (stateJson === null || (typeof stateJson === "string" && stateJson.length <= this.heads.maxStateChars))) {
      this.heads.set(head.id, { ...head, state: typeof stateJson === "string" ? (JSON.parse(stateJson) as unknown) : null });
    } else this.heads.delete(head.id);
  }

  async turnForRetry(id: string, turn: number): Promise<{ message: unknown; reply: string | null } | undefined> {
    const rows = await this.statements.selectTurnForRetry.execute({ id, turn });
    return rows[0];
  }

  async lineage(id: string): Promise<LineageEntry[]> {
    return this.db
      .select({ ancestorId: episodeLineage.ancestorId, toTurn: episodeLineage.toTurn })
      .from(episodeLineage)
      .where(eq(episodeLineage.episodeId, id))
      .orderBy(asc(episodeLineage.toTurn));
  }

  async readTurns(segments: TurnSegment[]): Promise<TurnRecord[]> {
    const out: TurnRecord[] = [];
    for (const s of segments) {
      if (s.from > s.to) continue;
      const rows = await this.db
        .select({
          turn: episodeTurns.turn,
          message: episodeTurns.message,
          replyMessages: episodeTurns.replyMessages,
          reply: episodeTurns.reply,
          sampled: episodeTurns.sampled,
          createdAt: episodeTurns.createdAt,
        })
        .from(episodeTurns)
        .where(and(eq(episodeTurns.episodeId, s.episodeId), between(episodeTurns.turn, s.from, s.to)))
        .orderBy(asc(episodeTurns.turn));
      // The reply's messages are cut out here, not in SQL: PostgreSQL's json parser refuses
      // what JSON.stringify may write (an escaped lone surrogate from a model's text), and
      // one such turn would make the whole transcript unreadable.
      for (const { reply, replyMessages, ...r } of rows) out.push({ ...r, replyMessages: replyMessages ?? replyMessagesOf(reply), ...callOf(reply) });
    }
    return out;
  }

  async forkPoint(episodeId: string, turn: number): Promise<ForkPoint | undefined> {
    const [row] = await this.db
      .select({ state: episodeTurns.state, missing: sql<boolean>`${episodeTurns.state} IS NULL`, done: episodeTurns.done, templateHash: episodeTurns.templateHash, tallies: episodeTurns.stopTallies })
      .from(episodeTurns)
      .where(and(eq(episodeTurns.episodeId, episodeId), eq(episodeTurns.turn, turn)));
    if (!row) return undefined;
    return { state: row.state, stateStored: !row.missing, done: row.done, templateHash: row.templateHash, tallies: row.tallies };
  }

  async commitStep(w: StepWrite): Promise<boolean> {
    const stateJson = w.stateJson ?? JSON.stringify(w.state ?? null);
    const tallies = w.tallies === null ? null : JSON.stringify(w.tallies);
    let won = false;
    try {
      const rows = await this.query("edgegym_commit_step", COMMIT_STEP, [
        w.turn,
        stateJson,
        w.status,
        pgText(w.stopReason),
        w.truncated,
        pgText(w.error),
        w.now,
        w.expiresAt,
        w.addedBytes,
        w.templateHash,
        w.templateChanges === null ? null : JSON.stringify(w.templateChanges),
        tallies,
        w.id,
        w.expectedTurn,
        w.maxEpisodeBytes,
        w.messageJson ?? JSON.stringify(w.message),
        w.reply,
        w.status === "done",
        w.sampled == null ? null : JSON.stringify(w.sampled),
        w.replyMessagesJson ?? null,
      ]);
      won = rows.length === 1;
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
