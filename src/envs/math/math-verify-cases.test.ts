import { describe, expect, it } from "vitest";
import oldCorpus from "./equivalence-cases.json" with { type: "json" };
import issueCases from "./issue-13-cases.json" with { type: "json" };
import issue28Cases from "./issue-28-cases.json" with { type: "json" };
import ported from "./math-verify-cases.json" with { type: "json" };
import { expectedVerdict, KNOWN_MISSES, OVERRIDES, verifyCase, type MathVerifyCase as Case } from "./math-verify-verdicts.js";
import { verifyMath } from "./verify.js";

/**
 * math-verify 0.9.0's own test cases (ported by scripts/port-math-verify-cases.py, each
 * naming its file:line) and the cases of issues 13 and 28, run through verifyMath with each case's
 * options. Zero false positives is enforced; every expected verdict must hold except the
 * OVERRIDES and KNOWN_MISSES of math-verify-verdicts.ts. A miss that starts to pass fails
 * the test until it is taken off the list, so the list only shrinks.
 */
const all = [...(ported.cases as Case[]), ...(issueCases.cases as Case[]), ...(issue28Cases.cases as Case[])];
const key = (c: Case): string => c.source;

describe("math-verify's test cases and issues 13's and 28's", () => {
  it("holds every ported case (276 from math-verify 0.9.0) and the issue's", () => {
    expect(ported.cases).toHaveLength(276);
    expect(ported.NOTICE).toMatch(/Apache License 2\.0/);
    expect((ported.cases as Case[]).every((c) => /^tests\/test_\w+\.py:\d+$/.test(c.source))).toBe(true);
    expect(issueCases.cases.length).toBeGreaterThanOrEqual(40);
  });

  it("records math-verify's verdict on each of issue 28's cases, and why wherever the decided one differs", () => {
    const cases = issue28Cases.cases as Case[];
    expect(issue28Cases.NOTICE).toMatch(/math-verify 0\.9\.0/);
    expect(cases.length).toBeGreaterThanOrEqual(100);
    expect(cases.filter((c) => typeof c.mathVerify !== "boolean").map(key)).toEqual([]);
    expect(cases.filter((c) => (c.mathVerify !== c.expected) !== Boolean(c.why)).map(key)).toEqual([]);
    expect(new Set(cases.map(key)).size).toBe(cases.length);
  });

  it("makes no false positive: every unequal pair is unequal", () => {
    const wrong = all.filter((c) => !expectedVerdict(c) && verifyCase(c)).map((c) => `${c.source}: ${c.gold} vs ${c.pred}`);
    expect(wrong).toEqual([]);
  });

  it("agrees with every other expected verdict; the known misses are exactly those listed", () => {
    const misses = all.filter((c) => expectedVerdict(c) && !verifyCase(c)).map(key);
    expect(misses.sort()).toEqual(Object.keys(KNOWN_MISSES).sort());
    const agree = all.length - misses.length;
    const portedAgree = ported.cases.length - misses.filter((m) => m.startsWith("tests/")).length - Object.keys(OVERRIDES).length;
    console.log(`math-verify corpus: edgegym agrees on ${portedAgree}/${ported.cases.length} of math-verify's expected verdicts (${Object.keys(OVERRIDES).length} argued wrong, ${Object.keys(KNOWN_MISSES).length} known misses); ${agree}/${all.length} with the issue's cases and the overrides`);
  });

  it("every override and known miss names a case that exists", () => {
    const sources = new Set(all.map(key));
    expect([...Object.keys(OVERRIDES), ...Object.keys(KNOWN_MISSES)].filter((s) => !sources.has(s))).toEqual([]);
  });
});

describe("verifyMath on the old 314-pair corpus", () => {
  const groups = oldCorpus.groups as unknown as Record<string, [string, string, boolean][]>;
  it("decides every pair as checkEquivalence does, with exact decimals, except prose it now reads", () => {
    const wrong = Object.values(groups)
      .flat()
      .filter(([candidate, gold, expected]) => verifyMath(gold, candidate, { precision: "exact" }).equal !== expected)
      .map(([candidate, gold, expected]) => ({ candidate, gold, expected }));
    // checkEquivalence compares an answer already taken out of its <answer> tags, so the
    // old corpus expects prose around a number to fail; verifyMath extracts the number.
    expect(wrong).toEqual([{ candidate: "The answer is 17", gold: "17", expected: false }]);
  });
});
