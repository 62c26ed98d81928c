import type { SandboxProvider } from "../../envs/sandbox/types.js";

/** Labels every container of an episode carries: which server database and which episode own it. */
export const SANDBOX_LABELS = {
  /** A stable name of the database (a hash of its path or URL, never credentials): servers sharing it share containers. */
  db: "edgegym.db",
  episode: "edgegym.episode",
  /** `episode` (an episode's box), `warm` (pre-created, unclaimed), `snapshot` (a fork's base image). */
  role: "edgegym.role",
  /** The tenant whose episode it is: the per-tenant `sandboxes` quota counts these. */
  tenant: "edgegym.tenant",
} as const;

/** What the janitor needs to know of an episode: whether it still owns a live sandbox. */
export type EpisodeLookup = (episodeId: string) => Promise<{ status: "active" | "done" | "closed" | "expired"; scored: boolean } | undefined>;

export interface JanitorOptions {
  provider: SandboxProvider;
  dbLabel: string;
  lookup: EpisodeLookup;
  /**
   * A container younger than this is left alone even when no episode names it yet: a reset
   * creates the container before it stores the episode. Default 2 minutes.
   */
  graceMs?: number;
  now?: () => number;
}

export interface SweepResult {
  checked: number;
  removed: string[];
}

/**
 * Removes the containers of this database whose episode no longer owns one: closed,
 * expired, done and scored, or unknown (a crash between creating a box and storing its
 * episode, or a database restored from a backup). Run at start-up and beside the reaper,
 * so a crash, a kill -9 or an expiry never leaves a container behind for long: the labels,
 * not any process's memory, say what is whose.
 */
export async function sweepSandboxes(options: JanitorOptions): Promise<SweepResult> {
  const now = (options.now ?? Date.now)();
  const grace = options.graceMs ?? 120_000;
  const boxes = await options.provider.list({ [SANDBOX_LABELS.db]: options.dbLabel, [SANDBOX_LABELS.role]: "episode" });
  const removed: string[] = [];
  for (const box of boxes) {
    const episodeId = box.labels[SANDBOX_LABELS.episode];
    const episode = episodeId ? await options.lookup(episodeId) : undefined;
    const owned = episode !== undefined && (episode.status === "active" || (episode.status === "done" && !episode.scored));
    if (owned) continue;
    if (episode === undefined && now - box.createdAtMs < grace) continue;
    await options.provider.destroy(box.id);
    removed.push(box.id);
  }
  return { checked: boxes.length, removed };
}
