import { describe, expect, it } from "vitest";
import { forkLineage, turnOwner, turnSegments, type TranscriptOwner } from "./lineage.js";

const root: TranscriptOwner = { id: "A", forkTurn: null, lineage: [] };
// B forked from A after turn 3; C forked from B after turn 5.
const b: TranscriptOwner = { id: "B", forkTurn: 3, lineage: [{ ancestorId: "A", toTurn: 3 }] };
const c: TranscriptOwner = { id: "C", forkTurn: 5, lineage: [{ ancestorId: "A", toTurn: 3 }, { ancestorId: "B", toTurn: 5 }] };

describe("turnSegments", () => {
  it("reads an episode made by reset from its own rows", () => {
    expect(turnSegments(root, 0, 7)).toEqual([{ episodeId: "A", from: 0, to: 7 }]);
  });

  it("reads a fork of a fork from each ancestor's stretch, then its own", () => {
    expect(turnSegments(c, 0, 9)).toEqual([
      { episodeId: "A", from: 0, to: 3 },
      { episodeId: "B", from: 4, to: 5 },
      { episodeId: "C", from: 6, to: 9 },
    ]);
  });

  it("clips a page to the stretches it touches", () => {
    expect(turnSegments(c, 5, 6)).toEqual([
      { episodeId: "B", from: 5, to: 5 },
      { episodeId: "C", from: 6, to: 6 },
    ]);
    expect(turnSegments(c, 2, 2)).toEqual([{ episodeId: "A", from: 2, to: 2 }]);
    expect(turnSegments(c, 8, 7)).toEqual([]);
  });

  it("names whose rows hold a turn", () => {
    expect([0, 3, 4, 5, 6].map((t) => turnOwner(c, t))).toEqual(["A", "A", "B", "B", "C"]);
  });
});

describe("forkLineage", () => {
  it("forks a root at any turn, 0 included", () => {
    expect(forkLineage(root, 0)).toEqual([{ ancestorId: "A", toTurn: 0 }]);
    expect(forkLineage(root, 4)).toEqual([{ ancestorId: "A", toTurn: 4 }]);
  });

  it("adds the parent only when the turn is one of its own", () => {
    expect(forkLineage(b, 6)).toEqual([
      { ancestorId: "A", toTurn: 3 },
      { ancestorId: "B", toTurn: 6 },
    ]);
    // Turn 3 is A's (B's prefix): B holds nothing of such a fork.
    expect(forkLineage(b, 3)).toEqual([{ ancestorId: "A", toTurn: 3 }]);
    expect(forkLineage(c, 4)).toEqual([
      { ancestorId: "A", toTurn: 3 },
      { ancestorId: "B", toTurn: 4 },
    ]);
    expect(forkLineage(c, 1)).toEqual([{ ancestorId: "A", toTurn: 1 }]);
  });

  it("keeps toTurn strictly increasing, so a transcript reads each turn once", () => {
    for (let t = 0; t <= 9; t++) {
      const lineage = forkLineage(c, t);
      for (let i = 1; i < lineage.length; i++) expect((lineage[i]?.toTurn ?? 0) > (lineage[i - 1]?.toTurn ?? 0)).toBe(true);
      const fork: TranscriptOwner = { id: "D", forkTurn: t, lineage };
      const turns = turnSegments(fork, 0, t + 2).flatMap((s) => Array.from({ length: s.to - s.from + 1 }, (_, i) => s.from + i));
      expect(turns).toEqual(Array.from({ length: t + 3 }, (_, i) => i));
    }
  });
});
