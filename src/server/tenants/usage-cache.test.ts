import { describe, expect, it } from "vitest";
import type { TenantUsage } from "../db/episode-store.js";
import { UsageCache } from "./usage-cache.js";

describe("UsageCache", () => {
  const setup = () => {
    let now = 0;
    let db: TenantUsage = { openEpisodes: 0, storedBytes: 0 };
    let reads = 0;
    const cache = new UsageCache(1000, 200, () => now);
    const admitOne = () =>
      cache.admit(
        "t",
        { openEpisodes: 1, storedBytes: 10 },
        (u) => u.openEpisodes < 2,
        async () => {
          reads++;
          return db;
        },
        (u) => new Error(`full at ${u.openEpisodes}`),
      );
    return { cache, admitOne, reads: () => reads, setDb: (u: TenantUsage) => (db = u), advance: (ms: number) => (now += ms) };
  };

  it("reads once, then admits on the remembered figure plus what it admitted, for up to maxAgeMs", async () => {
    const t = setup();
    await t.admitOne();
    await t.admitOne();
    await expect(t.admitOne()).rejects.toThrow("full at 2");
    expect(t.reads()).toBe(1);
    t.advance(1000); // a second later the figure is read again: the database still says 0 open
    await t.admitOne();
    expect(t.reads()).toBe(2);
  });

  it("re-reads before refusing, at most once per rereadMs; an episode released here frees its place at once", async () => {
    const t = setup();
    t.setDb({ openEpisodes: 2, storedBytes: 0 });
    await expect(t.admitOne()).rejects.toThrow("full at 2");
    await expect(t.admitOne()).rejects.toThrow("full at 2");
    expect(t.reads()).toBe(1); // the refusal within 200 ms used the figure it had
    t.setDb({ openEpisodes: 1, storedBytes: 0 }); // another process closed one
    t.advance(200);
    await t.admitOne();
    expect(t.reads()).toBe(2);
    await expect(t.admitOne()).rejects.toThrow("full at 2");
    t.cache.released("t"); // this process saw one end
    await t.admitOne();
    expect(t.reads()).toBe(2);
  });
});

describe("UsageCache under concurrent requests", () => {
  it("reads the database once for every request that finds the figure stale together, and counts each one's addition", async () => {
    let now = 0;
    let reads = 0;
    let release: (u: TenantUsage) => void = () => {};
    const cache = new UsageCache(1000, 200, () => now);
    const admit = () =>
      cache.admit(
        "t",
        { openEpisodes: 1, storedBytes: 5 },
        (u) => u.openEpisodes < 50,
        () => {
          reads++;
          return new Promise<TenantUsage>((resolve) => (release = resolve));
        },
        (u) => new Error(`full at ${u.openEpisodes}`),
      );
    const batch = Array.from({ length: 64 }, admit);
    expect(reads).toBe(1);
    release({ openEpisodes: 10, storedBytes: 0 });
    const results = await Promise.allSettled(batch);
    // 10 open in the database: 40 more fit under 50, the other 24 are refused on the shared figure.
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(40);
    expect(results.filter((r) => r.status === "rejected")).toHaveLength(24);
    expect(reads).toBe(1);
    now += 1000; // stale again: one new read, not one per request
    const next = Array.from({ length: 8 }, admit);
    release({ openEpisodes: 0, storedBytes: 0 });
    await Promise.all(next);
    expect(reads).toBe(2);
  });

  it("a failed read fails every request that waited for it, and the next request reads again", async () => {
    let reads = 0;
    const cache = new UsageCache(1000, 200, () => 0);
    const admit = () =>
      cache.admit(
        "t",
        { openEpisodes: 1, storedBytes: 0 },
        () => true,
        async () => {
          reads++;
          if (reads === 1) throw new Error("database is locked");
          return { openEpisodes: 0, storedBytes: 0 };
        },
        () => new Error("full"),
      );
    const failed = await Promise.allSettled([admit(), admit(), admit()]);
    expect(failed.map((r) => r.status)).toEqual(["rejected", "rejected", "rejected"]);
    await admit();
    expect(reads).toBe(2);
  });
});
