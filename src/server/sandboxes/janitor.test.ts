import { describe, expect, it } from "vitest";
import type { SandboxListing, SandboxProvider } from "../../envs/sandbox/types.js";
import { claimedBoxName, warmBoxName } from "./box-names.js";
import { sweepSandboxes, type EpisodeLookup } from "./janitor.js";

/**
 * The sweep's rules over boxes a daemon would list (labels and names): which boxes an
 * episode still owns, which warm boxes a pool keeps, and how long a claimed warm box whose
 * episode is not stored yet is spared. The same sweep against a real daemon runs in
 * test/harbor-restart.test.ts and test/harbor-fork-warm.test.ts.
 */
const DB = "0123456789abcdef";

function fakeDaemon(boxes: SandboxListing[], images: { id: string; createdAtMs: number; inUse?: boolean }[] = []) {
  const destroyed: string[] = [];
  const imagesRemoved: string[] = [];
  const provider = {
    list: async () => boxes.filter((b) => !destroyed.includes(b.id) && !destroyed.includes(b.name ?? "")),
    destroy: async (id: string) => void destroyed.push(id),
    listImages: async () => images,
    removeImage: async (id: string) => {
      if (images.find((i) => i.id === id)?.inUse) throw new Error("image is in use");
      imagesRemoved.push(id);
    },
  } as unknown as SandboxProvider;
  return { provider, destroyed, imagesRemoved };
}

const episodes: Record<string, Awaited<ReturnType<EpisodeLookup>>> = {
  ep_aa: { status: "active", scored: false },
  ep_bb: { status: "closed", scored: false },
  ep_cc: { status: "done", scored: false },
  ep_dd: { status: "done", scored: true },
};
const lookup: EpisodeLookup = async (id) => episodes[id];

describe("sandbox sweep", () => {
  it("keeps the boxes of active and unscored episodes, removes closed, scored and old unknown ones", async () => {
    const box = (id: string, episode: string, createdAtMs = 0): SandboxListing => ({ id, labels: { "edgegym.db": DB, "edgegym.role": "episode", "edgegym.episode": episode }, running: true, createdAtMs });
    const { provider, destroyed } = fakeDaemon([box("a", "ep_aa"), box("b", "ep_bb"), box("c", "ep_cc"), box("d", "ep_dd"), box("old", "ep_zz"), box("new", "ep_yy", 1_000_000)]);
    const result = await sweepSandboxes({ provider, dbLabel: DB, lookup, now: () => 1_000_000 + 1000 });
    expect(result.removed.sort()).toEqual(["b", "d", "old"]);
    expect(destroyed.sort()).toEqual(["b", "d", "old"]);
  });

  it("reads a claimed warm box's episode from its name, and spares one whose episode is not stored yet for the grace from first sight", async () => {
    const claimed = async (id: string, episode: string): Promise<SandboxListing> => ({
      id,
      name: await claimedBoxName(DB, episode, "alice"),
      labels: { "edgegym.db": DB, "edgegym.role": "warm", "edgegym.pool": "p1" },
      running: true,
      createdAtMs: 0, // made long ago, claimed just now
    });
    const { provider, destroyed } = fakeDaemon([await claimed("live", "ep_aa"), await claimed("closed", "ep_bb"), await claimed("pending", "ep_ee")]);
    const unknownSince = new Map<string, number>();
    let now = 10_000_000;
    const sweep = () => sweepSandboxes({ provider, dbLabel: DB, lookup, unknownSince, graceMs: 120_000, now: () => now });
    expect((await sweep()).removed).toEqual(["closed"]);
    now += 60_000;
    expect((await sweep()).removed).toEqual([]);
    now += 61_000;
    expect((await sweep()).removed).toEqual(["pending"]);
    expect(destroyed).toEqual(["closed", "pending"]);
    expect(unknownSince.size).toBe(0);
  });

  it("keeps unclaimed warm boxes of this process's pools, removes stopped ones and old ones of other pools", async () => {
    const warm = (id: string, pool: string, running = true, createdAtMs = 0): SandboxListing => ({ id, name: warmBoxName(DB), labels: { "edgegym.db": DB, "edgegym.role": "warm", "edgegym.pool": pool }, running, createdAtMs });
    const boxes = [warm("mine", "p1"), warm("stopped", "p1", false), warm("other", "p2"), warm("young", "p2", true, 500_000)];
    const { provider } = fakeDaemon(boxes);
    const result = await sweepSandboxes({ provider, dbLabel: DB, lookup, warmPools: new Set(["p1"]), now: () => 550_000 });
    expect(result.removed.sort()).toEqual(["other", "stopped"]);
  });

  it("removes snapshot images no fork uses any more, and leaves those in use or just made", async () => {
    const { provider, imagesRemoved } = fakeDaemon([], [
      { id: "sha256:old", createdAtMs: 0 },
      { id: "sha256:used", createdAtMs: 0, inUse: true },
      { id: "sha256:fresh", createdAtMs: 990_000 },
    ]);
    const result = await sweepSandboxes({ provider, dbLabel: DB, lookup, now: () => 1_000_000 });
    expect(result.imagesRemoved).toEqual(["sha256:old"]);
    expect(imagesRemoved).toEqual(["sha256:old"]);
  });
});
