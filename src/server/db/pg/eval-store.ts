import { and, asc, desc, eq, exists, inArray, isNull, lt, notExists, or, sql } from "drizzle-orm";
import type { EvalRollout, EvalStatus } from "../../../protocol/index.js";
import type { JobProgressCounts } from "../eval-store.js";
import type { EvalJobRow, NewEvalJobRow } from "../schema.js";
import type { EvalStorage } from "../stores.js";
import type { PgDb } from "./open.js";
import { evalJobs, evalRollouts } from "./schema.js";
import { pgText } from "./text.js";

const LIVE: EvalStatus[] = ["queued", "running"];
/** Statuses a job never leaves: `claim` takes only live jobs, `fail` only live ones, `finish` only with our lease. */
const ENDED: EvalStatus[] = ["completed", "failed", "cancelled"];

/**
 * Evaluation jobs and their rollouts on PostgreSQL: the SQLite store's statements
 * (../eval-store.ts says why each is safe to race, and in which order a job is deleted)
 * through drizzle's pg-core. Each racing write is one conditional statement, so a lease is
 * held by one process of the cluster at a time and a rollout is stored once per key.
 * Differences are PostgreSQL's types: count/sum/avg come back as strings, and the values
 * selected in insertRollout's INSERT … SELECT carry casts.
 */
export class PgEvalStore implements EvalStorage {
  constructor(private readonly db: PgDb) {}

  async insertJob(row: NewEvalJobRow): Promise<EvalJobRow> {
    const [inserted] = await this.db.insert(evalJobs).values(row).returning();
    if (!inserted) throw new Error(`eval job ${row.id} was not inserted`);
    return inserted;
  }

  async getJob(id: string): Promise<EvalJobRow | undefined> {
    const rows = await this.db.select().from(evalJobs).where(eq(evalJobs.id, id)).limit(1);
    return rows[0];
  }

  /** Newest first; only `tenant`'s jobs unless it is null (an admin key: every tenant's). */
  async listJobs(opts: { status?: EvalStatus | undefined; limit: number; tenant: string | null }): Promise<EvalJobRow[]> {
    const where = and(opts.status ? eq(evalJobs.status, opts.status) : undefined, opts.tenant === null ? undefined : eq(evalJobs.tenant, opts.tenant));
    return this.db.select().from(evalJobs).where(where).orderBy(desc(evalJobs.createdAt)).limit(opts.limit);
  }

  /** A tenant's queued and running jobs, counted in the database (index eval_jobs_tenant): the concurrent-evals quota. */
  async countLive(tenant: string): Promise<number> {
    const [row] = await this.db
      .select({ n: sql<string>`count(*)` })
      .from(evalJobs)
      .where(and(eq(evalJobs.tenant, tenant), inArray(evalJobs.status, LIVE)));
    return Number(row?.n ?? 0);
  }

  /** Live jobs nobody holds (never started, or their runner's lease lapsed), oldest first. */
  async unclaimedJobs(now: number, limit: number): Promise<EvalJobRow[]> {
    return this.db
      .select()
      .from(evalJobs)
      .where(and(inArray(evalJobs.status, LIVE), or(isNull(evalJobs.leaseExpiresAt), lt(evalJobs.leaseExpiresAt, now))))
      .orderBy(asc(evalJobs.createdAt))
      .limit(limit);
  }

  /** Takes the job for `owner` if it is live and unheld (or already ours); null when someone else holds it. */
  async claim(id: string, owner: string, now: number, leaseMs: number): Promise<EvalJobRow | null> {
    const rows = await this.db
      .update(evalJobs)
      .set({
        leaseOwner: owner,
        leaseExpiresAt: now + leaseMs,
        status: "running",
        startedAt: sql`COALESCE(${evalJobs.startedAt}, ${now}::bigint)`,
        updatedAt: now,
      })
      .where(
        and(
          eq(evalJobs.id, id),
          inArray(evalJobs.status, LIVE),
          eq(evalJobs.cancelRequested, false),
          or(isNull(evalJobs.leaseExpiresAt), lt(evalJobs.leaseExpiresAt, now), eq(evalJobs.leaseOwner, owner)),
        ),
      )
      .returning();
    return rows[0] ?? null;
  }

  /** Extends our lease; says whether we still hold it and whether a cancel was asked for. */
  async renew(id: string, owner: string, now: number, leaseMs: number): Promise<{ held: boolean; cancelRequested: boolean }> {
    const rows = await this.db
      .update(evalJobs)
      .set({ leaseExpiresAt: now + leaseMs, updatedAt: now })
      .where(and(eq(evalJobs.id, id), eq(evalJobs.leaseOwner, owner), eq(evalJobs.status, "running")))
      .returning({ cancelRequested: evalJobs.cancelRequested });
    return rows[0] ? { held: true, cancelRequested: rows[0].cancelRequested } : { held: false, cancelRequested: false };
  }

  /** Ends a job we hold: final status, summary, error; the lease is dropped. False when we no longer held it. */
  async finish(id: string, owner: string, end: { status: EvalStatus; summary: unknown; error: string | null; now: number; runMs: number }): Promise<boolean> {
    const rows = await this.db
      .update(evalJobs)
      .set({
        status: end.status,
        summary: end.summary,
        error: pgText(end.error),
        finishedAt: end.now,
        updatedAt: end.now,
        leaseOwner: null,
        leaseExpiresAt: null,
        runMs: sql`${evalJobs.runMs} + ${Math.round(end.runMs)}::bigint`,
      })
      .where(and(eq(evalJobs.id, id), eq(evalJobs.leaseOwner, owner)))
      .returning({ id: evalJobs.id });
    return rows.length === 1;
  }

  /** Lets go of a job still to finish (shutdown): any process, this one after a restart included, takes it over at once. */
  async release(id: string, owner: string, now: number, runMs: number): Promise<void> {
    await this.db
      .update(evalJobs)
      .set({ leaseOwner: null, leaseExpiresAt: null, updatedAt: now, runMs: sql`${evalJobs.runMs} + ${Math.round(runMs)}::bigint` })
      .where(and(eq(evalJobs.id, id), eq(evalJobs.leaseOwner, owner)));
  }

  /** Marks a live job failed whoever holds it (it cannot run here: environment or model endpoint missing). */
  async fail(id: string, error: string, now: number): Promise<void> {
    await this.db
      .update(evalJobs)
      .set({ status: "failed", error: pgText(error), finishedAt: now, updatedAt: now, leaseOwner: null, leaseExpiresAt: null })
      .where(and(eq(evalJobs.id, id), inArray(evalJobs.status, LIVE)));
  }

  /**
   * Asks a job to stop. A queued job nobody holds is cancelled on the spot; a running one
   * is flagged and its runner stops at its next heartbeat.
   */
  async requestCancel(id: string, now: number): Promise<void> {
    await this.db
      .update(evalJobs)
      .set({ status: "cancelled", cancelRequested: true, finishedAt: now, updatedAt: now })
      .where(and(eq(evalJobs.id, id), eq(evalJobs.status, "queued"), or(isNull(evalJobs.leaseExpiresAt), lt(evalJobs.leaseExpiresAt, now))));
    await this.db
      .update(evalJobs)
      .set({ cancelRequested: true, updatedAt: now })
      .where(and(eq(evalJobs.id, id), inArray(evalJobs.status, LIVE)));
  }

  /** Stores a finished rollout once; a second write of the same (job, row, index) is ignored. */
  async insertRollout(jobId: string, row: EvalRollout, now: number): Promise<void> {
    // INSERT … SELECT … FROM eval_jobs WHERE the job is live: a runner whose lease lapsed
    // and whose job was then ended (or deleted) elsewhere stores nothing, so an ended job's
    // rollouts never change again and a delete leaves no stragglers behind.
    await this.db
      .insert(evalRollouts)
      .select(
        this.db
          .select({
            jobId: evalJobs.id,
            exampleId: sql<number>`${row.example_id}::int`.as("example_id"),
            rolloutIndex: sql<number>`${row.rollout_index}::int`.as("rollout_index"),
            reward: sql<number>`${row.reward}::double precision`.as("reward"),
            errorCode: sql<string | null>`${row.error?.error ?? null}::text`.as("error_code"),
            row: sql<unknown>`${JSON.stringify(row)}::text`.as("row"),
            createdAt: sql<number>`${now}::bigint`.as("created_at"),
          })
          .from(evalJobs)
          .where(and(eq(evalJobs.id, jobId), inArray(evalJobs.status, LIVE))),
      )
      .onConflictDoNothing();
  }

  async doneKeys(jobId: string): Promise<{ exampleId: number; rolloutIndex: number }[]> {
    return this.db.select({ exampleId: evalRollouts.exampleId, rolloutIndex: evalRollouts.rolloutIndex }).from(evalRollouts).where(eq(evalRollouts.jobId, jobId));
  }

  async progress(jobId: string): Promise<JobProgressCounts> {
    const [row] = await this.db
      .select({
        done: sql<string>`count(*)`,
        errors: sql<number>`coalesce(sum(case when ${evalRollouts.errorCode} is not null then 1 else 0 end), 0)`,
        meanReward: sql<string | null>`avg(${evalRollouts.reward})`,
      })
      .from(evalRollouts)
      .where(eq(evalRollouts.jobId, jobId));
    return { done: Number(row?.done ?? 0), errors: Number(row?.errors ?? 0), meanReward: row?.meanReward == null ? null : Number(row.meanReward) };
  }

  /**
   * Deletes an ended job and its rollouts (see the note at the top of this file for the
   * order). Returns the rollouts removed, or null when no ended job of that id is left
   * to delete (unknown, still live, or deleted by someone else first).
   */
  async deleteEnded(id: string): Promise<{ rollouts: number } | null> {
    const ended = and(eq(evalJobs.id, id), inArray(evalJobs.status, ENDED));
    // Counted first: the delete itself reports its row count differently per driver, and
    // an ended job's rollouts no longer change (see insertRollout).
    const { done } = await this.progress(id);
    await this.db.delete(evalRollouts).where(and(eq(evalRollouts.jobId, id), exists(this.db.select({ one: sql`1` }).from(evalJobs).where(ended))));
    const gone = await this.db
      .delete(evalJobs)
      .where(and(ended, notExists(this.db.select({ one: sql`1` }).from(evalRollouts).where(eq(evalRollouts.jobId, evalJobs.id)))))
      .returning({ id: evalJobs.id });
    return gone.length === 1 ? { rollouts: done } : null;
  }

  /**
   * Deletes up to `limit` jobs that ended before `cutoff` (finished_at, ms), oldest first,
   * with their rollouts, in the order of `deleteEnded` but for the whole batch in three
   * statements (a D1 cron run stays small). A job whose rollouts were not all removed
   * (one past the batch's boundary) stays for the next pass.
   */
  async deleteEndedBefore(cutoff: number, limit: number): Promise<{ jobs: number; rollouts: number }> {
    const batch = this.db
      .select({ id: evalJobs.id })
      .from(evalJobs)
      .where(and(inArray(evalJobs.status, ENDED), lt(evalJobs.finishedAt, cutoff)))
      .orderBy(asc(evalJobs.finishedAt), asc(evalJobs.id))
      .limit(limit);
    const [counted] = await this.db.select({ n: sql<string>`count(*)` }).from(evalRollouts).where(inArray(evalRollouts.jobId, batch));
    await this.db.delete(evalRollouts).where(inArray(evalRollouts.jobId, batch));
    const gone = await this.db
      .delete(evalJobs)
      .where(
        and(
          inArray(evalJobs.status, ENDED),
          lt(evalJobs.finishedAt, cutoff),
          inArray(evalJobs.id, batch),
          notExists(this.db.select({ one: sql`1` }).from(evalRollouts).where(eq(evalRollouts.jobId, evalJobs.id))),
        ),
      )
      .returning({ id: evalJobs.id });
    return { jobs: gone.length, rollouts: Number(counted?.n ?? 0) };
  }

  /** Rollouts in (row, rollout index) order. */
  async rollouts(jobId: string, offset: number, limit: number): Promise<EvalRollout[]> {
    const rows = await this.db
      .select({ row: evalRollouts.row })
      .from(evalRollouts)
      .where(eq(evalRollouts.jobId, jobId))
      .orderBy(asc(evalRollouts.exampleId), asc(evalRollouts.rolloutIndex))
      .limit(limit)
      .offset(offset);
    return rows.map((r) => r.row as EvalRollout);
  }
}
