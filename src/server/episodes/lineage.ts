import type { LineageEntry, TurnSegment } from "../db/episode-store.js";

/**
 * How deep forks of forks may go. A fork's lineage holds one entry per ancestor whose
 * turns its prefix reads, and reading a transcript is one range read per entry: the
 * bound keeps that (and the lineage rows a fork writes) small.
 */
export const MAX_FORK_DEPTH = 32;

/** An episode as its transcript is laid out: its ancestors' turns up to each `toTurn`, then its own after `forkTurn`. */
export interface TranscriptOwner {
  id: string;
  /** Null for an episode started by reset (it owns every turn from 0). */
  forkTurn: number | null;
  /** Oldest first, `toTurn` strictly increasing; empty unless forked. */
  lineage: readonly LineageEntry[];
}

/** The stretches of turn rows that hold turns `from`..`to` (inclusive) of the episode, in order. */
export function turnSegments(owner: TranscriptOwner, from: number, to: number): TurnSegment[] {
  const out: TurnSegment[] = [];
  let next = 0;
  for (const { ancestorId, toTurn } of owner.lineage) {
    const lo = Math.max(from, next);
    const hi = Math.min(to, toTurn);
    if (lo <= hi) out.push({ episodeId: ancestorId, from: lo, to: hi });
    next = toTurn + 1;
  }
  const lo = Math.max(from, next);
  if (lo <= to) out.push({ episodeId: owner.id, from: lo, to });
  return out;
}

/** Whose rows hold turn `turn` of the episode. */
export function turnOwner(owner: TranscriptOwner, turn: number): string {
  return turnSegments(owner, turn, turn)[0]?.episodeId ?? owner.id;
}

/**
 * The lineage of a fork of `parent` after its turn `turn`: the parent's own lineage cut at
 * `turn`, then the parent itself when the turn is one of its own (past its fork turn).
 */
export function forkLineage(parent: TranscriptOwner, turn: number): LineageEntry[] {
  const out: LineageEntry[] = [];
  for (const entry of parent.lineage) {
    if (entry.toTurn >= turn) {
      out.push({ ancestorId: entry.ancestorId, toTurn: turn });
      return out;
    }
    out.push(entry);
  }
  out.push({ ancestorId: parent.id, toTurn: turn });
  return out;
}
