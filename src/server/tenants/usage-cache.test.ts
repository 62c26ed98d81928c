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
