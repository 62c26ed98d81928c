import { describe, expect, it } from "vitest";
import { isoTime } from "./iso-time.js";

describe("isoTime", () => {
  it("writes what toISOString writes, in and across seconds, and outside the cached range", () => {
    const start = Date.UTC(2026, 10, 26, 23, 59, 58, 990);
    for (let ms = start; ms < start + 2_100; ms += 7) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    for (const ms of [0, 1, 999, 1000, 253_402_300_799_999, 253_402_300_800_000, 8.64e15, -1, -62_198_755_200_000, 1.5, Date.now()]) {
      expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    }
    // Back to an earlier second after a later one: the cache follows.
    expect(isoTime(start)).toBe(new Date(start).toISOString());
  });

  it("throws where toISOString throws", () => {
    expect(() => isoTime(Number.NaN)).toThrow(RangeError);
    expect(() => isoTime(8.64e15 + 1)).toThrow(RangeError);
  });
});
