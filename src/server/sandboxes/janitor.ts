import type { SandboxProvider } from "../../envs/sandbox/types.js";
import { boxOwner } from "./box-names.js";
import { SANDBOX_LABELS } from "./labels.js";

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
  /** Warm pools this process keeps (their keys): an unclaimed warm box of another pool is removed. */
  warmPools?: ReadonlySet<string>;
  /**
   * When each claimed warm box was first seen with no stored episode: a claim renames a box
   * that may be hours old just before its episode is stored, so the grace runs from the
   * first sweep that saw it unknown. Kept by the caller from one sweep to the next.
   */
  unknownSince?: Map<string, number>;
  now?: () => number;
}

export interface SweepResult {
  checked: number;
  removed: string[];
  /** Snapshot images (forks' bases) removed because no container uses them any more. */
  imagesRemoved?: string[];
}

/**
 * Removes the containers of this database whose episode no longer owns one: closed,
 * expired, done and scored, or unknown (a crash between creating a box and storing its
 * episode, or a database restored from a backup); unclaimed warm boxes that are stopped or
 * of a pool this process does not keep; and snapshot images no fork uses any more. Run at
 * start-up and beside the reaper, so a crash, a kill -9 or an expiry never leaves a
 * container behind for long: the labels and names, not any process's memory, say what is whose.
 */
export async function sweepSandboxes(options: JanitorOptions): Promise<SweepResult> {
  const now = (options.now ?? Date.now)();
  const grace = options.graceMs ?? 120_000;
  const boxes = await options.provider.list({ [SANDBOX_LABELS.db]: options.dbLabel });
  const removed: string[] = [];
  const seenUnknown = new Set<string>();
  for (const box of boxes) {
    const owner = boxOwner(box, options.dbLabel);
    if (owner.kind === "unknown") continue;
    if (owner.kind === "warm") {
      if (box.running && options.warmPools?.has(owner.pool)) continue;
      if (!box.running || now - box.createdAtMs >= grace) {
        await options.provider.destroy(box.name ?? box.id);
        removed.push(box.id);
      }
      continue;
    }
    const episode = await options.lookup(owner.episodeId);
    const owned = episode !== undefined && (episode.status === "active" || (episode.status === "done" && !episode.scored));
    if (owned) continue;
    if (episode === undefined) {
      // A label-named box is as old as its episode; a claimed warm box is timed from the first sweep that found it unknown.
      const since = owner.tenantTag === undefined ? box.createdAtMs : (options.unknownSince?.get(box.id) ?? now);
      if (owner.tenantTag !== undefined) seenUnknown.add(box.id);
      if (now - since < grace) {
        if (owner.tenantTag !== undefined) options.unknownSince?.set(box.id, since);
        continue;
      }
    }
    await options.provider.destroy(box.id);
    removed.push(box.id);
  }
  if (options.unknownSince) for (const id of [...options.unknownSince.keys()]) if (!seenUnknown.has(id) || removed.includes(id)) options.unknownSince.delete(id);
  const imagesRemoved = await sweepSnapshots(options.provider, options.dbLabel, now, grace);
  return { checked: boxes.length, removed, ...(imagesRemoved.length ? { imagesRemoved } : {}) };
}

/** Snapshot images of this database old enough that their forks were created: removed unless a container (or a newer snapshot) still uses them. */
async function sweepSnapshots(provider: SandboxProvider, dbLabel: string, now: number, grace: number): Promise<string[]> {
  const removed: string[] = [];
  for (const image of await provider.listImages({ [SANDBOX_LABELS.db]: dbLabel, [SANDBOX_LABELS.role]: "snapshot" })) {
    if (now - image.createdAtMs < grace) continue;
    try {
      await provider.removeImage(image.id);
      removed.push(image.id);
    } catch {
      // In use by a fork's container or a snapshot of one: it goes when they do.
    }
  }
  return removed;
}
