import { describe, expect, it } from "vitest";
import cases from "./equivalence-cases.json" with { type: "json" };
import { checkEquivalence, mathEqual } from "./equivalence.js";

const groups = cases.groups as unknown as Record<string, [string, string, boolean][]>;

describe("math equivalence corpus", () => {
  const all = Object.values(groups).flat();

  it("holds at least 300 pairs, equal and unequal", () => {
    expect(all.length).toBeGreaterThanOrEqual(300);
    expect(all.filter(([, , eq]) => !eq).length).toBeGreaterThanOrEqual(80);
  });

  for (const [group, pairs] of Object.entries(groups)) {
    it(`decides every pair in "${group}"`, () => {
      const wrong = pairs
        .map(([candidate, gold, expected]) => ({ candidate, gold, expected, got: checkEquivalence(candidate, gold) }))
        .filter((r) => r.got.equal !== r.expected);
      expect(wrong).toEqual([]);
    });
  }

  it("is symmetric on the corpus's equal pairs that carry no units or labels", () => {
    const plain = all.filter(([c, g, eq]) => eq && !/[a-zA-Z%$°]/.test(c + g));
    for (const [c, g] of plain) expect(mathEqual(g, c), `${g} vs ${c}`).toBe(true);
  });
});

describe("checkEquivalence", () => {
  it("names how it decided", () => {
    expect(checkEquivalence("0.5", "1/2").method).toBe("exact");
    expect(checkEquivalence("\\sqrt{2}", "2^{0.5}").method).toBe("numeric");
    expect(checkEquivalence("2x+2", "2(x+1)").method).toBe("symbolic");
    expect(checkEquivalence("2x=4", "x=2").method).toBe("equation");
    expect(checkEquivalence("{1,2}", "2,1").method).toBe("structure");
    expect(checkEquivalence("yes", "no").method).toBe("text");
    expect(checkEquivalence(null, "1")).toEqual({ equal: false, method: "empty" });
  });
});
