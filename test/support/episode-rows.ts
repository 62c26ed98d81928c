import type { StepWrite } from "../../src/server/db/episode-store.js";
import type { NewEvalJobRow, NewEpisodeRow } from "../../src/server/db/schema.js";

/** Rows as the stores' own tests write them, with everything but what a test varies. */

export const OPENING = [{ role: "user", content: "hi" }];

/** A new episode's head (reset at 1, expiring at 60,001). */
export function episodeRow(id: string, extra: Partial<NewEpisodeRow> = {}): NewEpisodeRow {
  return {
    id,
    envId: "e",
    envVersion: "1",
    split: "train",
    taskIndex: 3,
    seed: 7,
    args: { level: 2 },
    metadata: { run: "r1" },
    state: null,
    promptLength: 1,
    turn: 0,
    status: "active",
    stopReason: null,
    truncated: false,
    error: null,
    score: null,
    scoredAt: null,
    idempotencyKey: null,
    requestHash: "{}",
    ttlSeconds: 60,
    createdAt: 1,
    updatedAt: 1,
    expiresAt: 60_001,
    ...extra,
  };
}

/** The write of the step from `expectedTurn` to the next turn. */
export function stepWrite(id: string, expectedTurn: number, extra: Partial<StepWrite> = {}): StepWrite {
  return {
    id,
    expectedTurn,
    turn: expectedTurn + 1,
    state: { n: expectedTurn + 1 },
    message: { role: "assistant", content: `a${expectedTurn}` },
    reply: JSON.stringify({ turn: expectedTurn + 1, messages: [{ role: "user", content: `r${expectedTurn}` }] }),
    sampled: null,
    templateHash: null,
    templateChanges: null,
    tallies: null,
    status: "active",
    stopReason: null,
    truncated: false,
    error: null,
    now: 2,
    expiresAt: 60_002,
    addedBytes: 10,
    maxEpisodeBytes: 1_000_000,
    ...extra,
  };
}

/** A queued eval job created at `now`. */
export function evalJobRow(id: string, now: number, extra: Partial<NewEvalJobRow> = {}): NewEvalJobRow {
  return {
    id, envId: "e", envVersion: "1", model: "m", status: "queued", request: { n: 1 }, split: "eval",
    numExamples: 2, totalRollouts: 2, summary: null, error: null, cancelRequested: false, leaseOwner: null, leaseExpiresAt: null,
    runMs: 0, createdAt: now, updatedAt: now, startedAt: null, finishedAt: null, tenant: "public",
    ...extra,
  };
}
