import { describe, expect, it } from "vitest";
import { newEpisodeId } from "./episode-id.js";

describe("newEpisodeId", () => {
  it("is ep_ and 32 hex digits, the first 12 the creation time", () => {
    const id = newEpisodeId(Date.UTC(2026, 10, 26));
    expect(id).toMatch(/^ep_[0-9a-f]{32}$/);
    expect(parseInt(id.slice(3, 15), 16)).toBe(Date.UTC(2026, 10, 26));
  });

  it("sorts by creation time, so ids made together share an index's right edge", () => {
    const ids = [1_000, 2_000, 1_500_000_000_000, Date.now()].map((t) => newEpisodeId(t));
    expect([...ids].sort()).toEqual(ids);
  });

  it("keeps 80 random bits: ids made in the same millisecond differ and do not repeat", () => {
    const ids = new Set(Array.from({ length: 10_000 }, () => newEpisodeId(42)));
    expect(ids.size).toBe(10_000);
    const tails = [...ids].map((id) => id.slice(15));
    // Every hex digit of the random part takes many values: no fixed or counter-like tail.
    for (let i = 0; i < 20; i++) expect(new Set(tails.map((t) => t[i])).size).toBe(16);
  });
});
