import { sql, type SQL, type Table } from "drizzle-orm";
import type { EvalRollout, EvalStatus } from "../../protocol/index.js";
import type { EdgegymDb } from "./database.js";
import { evalJobs, type EvalJobRow, type NewEvalJobRow } from "./schema.js";
import { decodeRow, encodeRow, sqliteEngine, type SqlEngine } from "./sql-engine.js";

export interface JobProgressCounts {
  done: number;
  errors: number;
  meanReward: number | null;
}

const LIVE = sql`('queued', 'running')`;
/** Statuses a job never leaves: `claim` takes only live jobs, `fail` only live ones, `finish` only with our lease. */
const ENDED = sql`('completed', 'failed', 'cancelled')`;
/** Jobs nobody holds: never started, or their runner's lease lapsed. */
const unheld = (now: number) => sql`(lease_expires_at IS NULL OR lease_expires_at < ${now})`;
/** JSON text as both schemas store it (SQL NULL for none). */
const json = (value: unknown) => (value == null ? null : JSON.stringify(value));

/** The eval_jobs table of the engine's schema: how its rows are encoded and read back. */
export type EvalJobsTable = Table & { $inferSelect: EvalJobRow; $inferInsert: NewEvalJobRow };

/**
 * How a job and its rollouts are deleted, on better-sqlite3 and on D1 alike (no
 * transaction spans two statements there), by a DELETE request or by the retention pass:
 *
 *  1. its rollouts, only while the job row exists and has ended (an EXISTS guard in the
 *     same statement);
 *  2. the job row, only while it has ended and no rollout of it is left.
 *
 * An ended status is final, so a job that is queued or running is never touched by
 * either statement, and one that starts between them cannot exist (a job does not go
 * back from ended to live). A rollout is only ever stored for a live job (the guard in
 * `insertRollout`), so nothing lands between 1 and 2 either. The other order (job row
 * first) would leave rollouts that no API can name and only a full-table scan finds if
 * the process died between the statements; this order leaves at worst an ended job
 * with fewer rollouts, still listed, that the next DELETE or retention pass finishes.
 */

/**
 * Evaluation jobs and their rollouts, on every SQL engine: the SQL is the same on SQLite
 * (better-sqlite3, D1) and PostgreSQL, so it is written once over an engine
 * (sql-engine.ts); `jobs` is that engine's eval_jobs table, whose columns encode and
 * decode a job row (JSON text, booleans, int8). Like the episode store, every write that
 * may race is one conditional statement (a lease is taken only where it has lapsed or is
 * ours, a rollout is inserted once per key), so it is correct on D1 without transactions
 * and across the processes of a PostgreSQL cluster alike.
 */
export class EvalStore {
  constructor(
    private readonly engine: SqlEngine,
    private readonly jobs: EvalJobsTable,
  ) {}

  private async jobRows(statement: SQL): Promise<EvalJobRow[]> {
    return (await this.engine.rows(statement)).map((raw) => decodeRow(this.jobs, raw));
  }

  async insertJob(row: NewEvalJobRow): Promise<EvalJobRow> {
    const [inserted] = await this.jobRows(sql`INSERT INTO eval_jobs ${encodeRow(this.jobs, row)} RETURNING *`);
    if (!inserted) throw new Error(`eval job ${row.id} was not inserted`);
    return inserted;
  }

  async getJob(id: string): Promise<EvalJobRow | undefined> {
    const [row] = await this.jobRows(sql`SELECT * FROM eval_jobs WHERE id = ${id}`);
    return row;
  }

  /** Newest first; only `tenant`'s jobs unless it is null (an admin key: every tenant's). */
  async listJobs(opts: { status?: EvalStatus | undefined; limit: number; tenant: string | null }): Promise<EvalJobRow[]> {
    const status = opts.status ? sql`status = ${opts.status}` : sql`TRUE`;
    const tenant = opts.tenant === null ? sql`TRUE` : sql`tenant = ${opts.tenant}`;
    return this.jobRows(sql`SELECT * FROM eval_jobs WHERE ${status} AND ${tenant} ORDER BY created_at DESC LIMIT ${opts.limit}`);
  }

  /** A tenant's queued and running jobs, counted in the database (index eval_jobs_tenant): the concurrent-evals quota. */
  async countLive(tenant: string): Promise<number> {
    const [row] = await this.engine.rows<{ n: unknown }>(sql`SELECT count(*) AS n FROM eval_jobs WHERE tenant = ${tenant} AND status IN ${LIVE}`);
    // Number(): PostgreSQL's count is int8, a string from node-postgres.
    return Number(row?.n ?? 0);
  }

  /** Live jobs nobody holds (never started, or their runner's lease lapsed), oldest first. */
  async unclaimedJobs(now: number, limit: number): Promise<EvalJobRow[]> {
    return this.jobRows(sql`SELECT * FROM eval_jobs WHERE status IN ${LIVE} AND ${unheld(now)} ORDER BY created_at LIMIT ${limit}`);
  }

  /** Takes the job for `owner` if it is live and unheld (or already ours); null when someone else holds it. */
  async claim(id: string, owner: string, now: number, leaseMs: number): Promise<EvalJobRow | null> {
    const [row] = await this.jobRows(sql`
      UPDATE eval_jobs SET lease_owner = ${owner}, lease_expires_at = ${now + leaseMs}, status = 'running', started_at = COALESCE(started_at, CAST(${now} AS BIGINT)), updated_at = ${now}
      WHERE id = ${id} AND status IN ${LIVE} AND NOT cancel_requested AND (${unheld(now)} OR lease_owner = ${owner})
      RETURNING *`);
    return row ?? null;
  }

  /** Extends our lease; says whether we still hold it and whether a cancel was asked for. */
  async renew(id: string, owner: string, now: number, leaseMs: number): Promise<{ held: boolean; cancelRequested: boolean }> {
    const [row] = await this.engine.rows<{ cancel_requested: unknown }>(sql`
      UPDATE eval_jobs SET lease_expires_at = ${now + leaseMs}, updated_at = ${now} WHERE id = ${id} AND lease_owner = ${owner} AND status = 'running'
      RETURNING cancel_requested`);
    // Boolean(): SQLite answers 0/1, PostgreSQL a boolean.
    return row ? { held: true, cancelRequested: Boolean(row.cancel_requested) } : { held: false, cancelRequested: false };
  }

  /** Ends a job we hold: final status, summary, error; the lease is dropped. False when we no longer held it. */
  async finish(id: string, owner: string, end: { status: EvalStatus; summary: unknown; error: string | null; now: number; runMs: number }): Promise<boolean> {
    const rows = await this.engine.rows(sql`
      UPDATE eval_jobs SET status = ${end.status}, summary = ${json(end.summary)}, error = ${this.engine.text(end.error)}, finished_at = ${end.now}, updated_at = ${end.now},
        lease_owner = NULL, lease_expires_at = NULL, run_ms = run_ms + CAST(${Math.round(end.runMs)} AS BIGINT)
      WHERE id = ${id} AND lease_owner = ${owner}
      RETURNING id`);
    return rows.length === 1;
  }

  /** Lets go of a job still to finish (shutdown): any process, this one after a restart included, takes it over at once. */
  async release(id: string, owner: string, now: number, runMs: number): Promise<void> {
    await this.engine.run(sql`
      UPDATE eval_jobs SET lease_owner = NULL, lease_expires_at = NULL, updated_at = ${now}, run_ms = run_ms + CAST(${Math.round(runMs)} AS BIGINT)
      WHERE id = ${id} AND lease_owner = ${owner}`);
  }

  /** Marks a live job failed whoever holds it (it cannot run here: environment or model endpoint missing). */
  async fail(id: string, error: string, now: number): Promise<void> {
    await this.engine.run(sql`
      UPDATE eval_jobs SET status = 'failed', error = ${this.engine.text(error)}, finished_at = ${now}, updated_at = ${now}, lease_owner = NULL, lease_expires_at = NULL
      WHERE id = ${id} AND status IN ${LIVE}`);
  }

  /**
   * Asks a job to stop. A queued job nobody holds is cancelled on the spot; a running one
   * is flagged and its runner stops at its next heartbeat.
   */
  async requestCancel(id: string, now: number): Promise<void> {
    await this.engine.run(sql`
      UPDATE eval_jobs SET status = 'cancelled', cancel_requested = TRUE, finished_at = ${now}, updated_at = ${now}
      WHERE id = ${id} AND status = 'queued' AND ${unheld(now)}`);
    await this.engine.run(sql`UPDATE eval_jobs SET cancel_requested = TRUE, updated_at = ${now} WHERE id = ${id} AND status IN ${LIVE}`);
  }

  /** Stores a finished rollout once; a second write of the same (job, row, index) is ignored. */
  async insertRollout(jobId: string, row: EvalRollout, now: number): Promise<void> {
    // INSERT … SELECT … FROM eval_jobs WHERE the job is live: a runner whose lease lapsed
    // and whose job was then ended (or deleted) elsewhere stores nothing, so an ended job's
    // rollouts never change again and a delete leaves no stragglers behind. The casts give
    // PostgreSQL the selected values' types (an untyped parameter in a select list is text).
    await this.engine.run(sql`
      INSERT INTO eval_rollouts (job_id, example_id, rollout_index, reward, error_code, "row", created_at)
      SELECT id, CAST(${row.example_id} AS INTEGER), CAST(${row.rollout_index} AS INTEGER), CAST(${row.reward} AS DOUBLE PRECISION),
        CAST(${row.error?.error ?? null} AS TEXT), CAST(${JSON.stringify(row)} AS TEXT), CAST(${now} AS BIGINT)
      FROM eval_jobs WHERE id = ${jobId} AND status IN ${LIVE}
      ON CONFLICT DO NOTHING`);
  }

  async doneKeys(jobId: string): Promise<{ exampleId: number; rolloutIndex: number }[]> {
    const rows = await this.engine.rows<{ example_id: number; rollout_index: number }>(sql`SELECT example_id, rollout_index FROM eval_rollouts WHERE job_id = ${jobId}`);
    return rows.map((r) => ({ exampleId: r.example_id, rolloutIndex: r.rollout_index }));
  }

  async progress(jobId: string): Promise<JobProgressCounts> {
    const [row] = await this.engine.rows<{ done: unknown; errors: unknown; mean_reward: unknown }>(sql`
      SELECT count(*) AS done, coalesce(sum(CASE WHEN error_code IS NOT NULL THEN 1 ELSE 0 END), 0) AS errors, avg(reward) AS mean_reward
      FROM eval_rollouts WHERE job_id = ${jobId}`);
    // Number(): PostgreSQL's count, sum and avg come back as strings (int8, numeric).
    return { done: Number(row?.done ?? 0), errors: Number(row?.errors ?? 0), meanReward: row?.mean_reward == null ? null : Number(row.mean_reward) };
  }

  /**
   * Deletes an ended job and its rollouts (see the note at the top of this file for the
   * order). Returns the rollouts removed, or null when no ended job of that id is left
   * to delete (unknown, still live, or deleted by someone else first).
   */
  async deleteEnded(id: string): Promise<{ rollouts: number } | null> {
    // Counted first: the delete itself reports its row count differently per driver, and
    // an ended job's rollouts no longer change (see insertRollout).
    const { done } = await this.progress(id);
    await this.engine.run(sql`
      DELETE FROM eval_rollouts WHERE job_id = ${id} AND EXISTS (SELECT 1 FROM eval_jobs WHERE id = ${id} AND status IN ${ENDED})`);
    const gone = await this.engine.rows(sql`
      DELETE FROM eval_jobs WHERE id = ${id} AND status IN ${ENDED} AND NOT EXISTS (SELECT 1 FROM eval_rollouts WHERE job_id = ${id})
      RETURNING id`);
    return gone.length === 1 ? { rollouts: done } : null;
  }

  /**
   * Deletes up to `limit` jobs that ended before `cutoff` (finished_at, ms), oldest first,
   * with their rollouts, in the order of `deleteEnded` but for the whole batch in three
   * statements (a D1 cron run stays small). A job whose rollouts were not all removed
   * (one past the batch's boundary) stays for the next pass.
   */
  async deleteEndedBefore(cutoff: number, limit: number): Promise<{ jobs: number; rollouts: number }> {
    const ended = sql`status IN ${ENDED} AND finished_at < ${cutoff}`;
    const batch = sql`SELECT id FROM eval_jobs WHERE ${ended} ORDER BY finished_at, id LIMIT ${limit}`;
    const [counted] = await this.engine.rows<{ n: unknown }>(sql`SELECT count(*) AS n FROM eval_rollouts WHERE job_id IN (${batch})`);
    await this.engine.run(sql`DELETE FROM eval_rollouts WHERE job_id IN (${batch})`);
    const gone = await this.engine.rows(sql`
      DELETE FROM eval_jobs WHERE ${ended} AND id IN (${batch}) AND NOT EXISTS (SELECT 1 FROM eval_rollouts r WHERE r.job_id = eval_jobs.id)
      RETURNING id`);
    return { jobs: gone.length, rollouts: Number(counted?.n ?? 0) };
  }

  /** Rollouts in (row, rollout index) order. */
  async rollouts(jobId: string, offset: number, limit: number): Promise<EvalRollout[]> {
    const rows = await this.engine.rows<{ row: string }>(sql`
      SELECT "row" FROM eval_rollouts WHERE job_id = ${jobId} ORDER BY example_id, rollout_index LIMIT ${limit} OFFSET ${offset}`);
    return rows.map((r) => JSON.parse(r.row) as EvalRollout);
  }
}

/** The embedded default: jobs in the SQLite database (better-sqlite3 or D1). */
export function sqliteEvalStore(db: EdgegymDb): EvalStore {
  return new EvalStore(sqliteEngine(db), evalJobs);
}
