import { describe, expect, it } from "vitest";
import { startInTurns } from "./turns.js";

describe("startInTurns", () => {
  it("lets a macrotask queued by one item run before the next item starts", async () => {
    const log: string[] = [];
    await startInTurns([0, 1, 2], async (i) => {
      log.push(`start ${i}`);
      if (i === 0) setImmediate(() => log.push("other request"));
      return i;
    });
    expect(log).toEqual(["start 0", "other request", "start 1", "start 2"]);
  });

  it("keeps results in order, overlaps async work, and rejects with an item's error", async () => {
    const started: number[] = [];
    const results = await startInTurns([30, 1, 1], async (ms, i) => {
      started.push(i);
      await new Promise((r) => setTimeout(r, ms));
      return i;
    });
    expect(results).toEqual([0, 1, 2]);
    await expect(startInTurns([1, 2], async (n) => (n === 1 ? Promise.reject(new Error("boom")) : n))).rejects.toThrow("boom");
  });
});
