import { describe, expect, it } from "vitest";
import { createRng, mixSeed } from "./rng.js";

describe("createRng", () => {
  it("is a pure function of its seed parts", () => {
    const a = createRng(42, 3);
    const b = createRng(42, 3);
    const seqA = Array.from({ length: 20 }, () => a.next());
    expect(Array.from({ length: 20 }, () => b.next())).toEqual(seqA);
    expect(Array.from({ length: 20 }, () => createRng(42, 4).next())).not.toEqual(seqA);
  });

  it("keeps fixed outputs across releases (episodes must replay on a newer server)", () => {
    const rng = createRng(2026, 1);
    expect([rng.int(1, 100), rng.int(1, 100), rng.int(1, 100)]).toMatchSnapshot();
  });

  it("draws uniform-looking integers in range", () => {
    const rng = createRng(7);
    const counts = new Array(10).fill(0);
    for (let i = 0; i < 20_000; i++) counts[rng.int(0, 9)]++;
    for (const c of counts) expect(Math.abs(c - 2000)).toBeLessThan(250);
  });

  it("shuffles without losing elements and picks from the list", () => {
    const rng = createRng(1);
    const items = Array.from({ length: 50 }, (_, i) => i);
    const shuffled = rng.shuffle(items);
    expect([...shuffled].sort((x, y) => x - y)).toEqual(items);
    expect(shuffled).not.toEqual(items);
    expect(items).toContain(rng.pick(items));
    expect(() => rng.pick([])).toThrow();
  });

  it("mixes large and negative seed parts without collisions on neighbours", () => {
    const seen = new Set([0, 1, 2, 2 ** 32 - 1, 2 ** 40, -1].map((s) => mixSeed(s, 0)));
    expect(seen.size).toBe(6);
  });
});
