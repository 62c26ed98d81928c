import { describe, expect, it } from "vitest";
import { scoreCompletion } from "../engine.js";
import { math } from "../builtin/math/index.js";
import { AnswerTooLongError } from "../answer-limits.js";
import { checkEquivalence, MATH_ANSWER_MAX_CHARS, MATH_MAX_ITEMS, mathEqual } from "./equivalence.js";
import { scalarEqual } from "./scalar.js";
import { MATH_TEXT_MAX_CHARS } from "./extract.js";
import { verifyMath } from "./verify.js";

/** `n` distinct rationals written two ways, so no element is textually equal to its partner. */
const fractions = (n: number) => Array.from({ length: n }, (_, i) => `${i + 1}/${i + 2}`);
const doubled = (n: number) => Array.from({ length: n }, (_, i) => `${2 * (i + 1)}/${2 * (i + 2)}`);

describe("math answers are bounded", () => {
  it("refuses the 1,600-element set against itself reversed (23 s before) as too long", () => {
    const items = Array.from({ length: 1600 }, (_, i) => `x^2+${i}`);
    const answer = `{${items.join(",")}}`;
    const gold = `{${items.reverse().join(",")}}`;
    expect(answer.length).toBeLessThan(20_000);
    expect(() => mathEqual(answer, gold)).toThrow(AnswerTooLongError);
  });

  it("scores that answer 0 on `correct` with the reason, in the math environment", async () => {
    const items = Array.from({ length: 1600 }, (_, i) => `${i}`);
    const long = await scoreCompletion(math, { prompt: "p", completion: `<answer>{${items.join(",")}}</answer>`, answer: `{${items.reverse().join(",")}}` });
    expect(long.components[0]).toMatchObject({ name: "correct", score: 0, error: expect.stringMatching(/^AnswerTooLongError: answer is 6891 characters, past this environment's limit of 2000/) });
    const many = Array.from({ length: 100 }, (_, i) => `${i}`);
    const score = await scoreCompletion(math, { prompt: "p", completion: `<answer>{${many.join(",")}}</answer>`, answer: `{${many.reverse().join(",")}}` });
    expect(score.components[0]).toMatchObject({ name: "correct", score: 0, error: expect.stringMatching(/^AnswerTooLongError: answer is 100 elements, past this environment's limit of 32/) });
    expect(score.components[1]).toMatchObject({ name: "format", score: 1 });
  });

  it("refuses an answer past MATH_ANSWER_MAX_CHARS, a reference too", () => {
    expect(() => mathEqual("1".repeat(MATH_ANSWER_MAX_CHARS + 1), "1")).toThrow(/past this environment's limit of 2000/);
    expect(() => mathEqual("1", "1".repeat(MATH_ANSWER_MAX_CHARS + 1))).toThrow(/reference answer/);
  });

  it("at the element cap still matches sets unordered, textually equal or not", () => {
    const n = MATH_MAX_ITEMS;
    expect(mathEqual(`{${fractions(n).join(",")}}`, `{${doubled(n).reverse().join(",")}}`)).toBe(true);
    expect(mathEqual(`{${fractions(n).join(", ")}}`, `{${fractions(n).reverse().join(",")}}`)).toBe(true);
    const off = fractions(n);
    off[0] = "7/3";
    expect(mathEqual(`{${off.join(",")}}`, `{${fractions(n).reverse().join(",")}}`)).toBe(false);
    expect(() => mathEqual(`{${fractions(n + 1).join(",")}}`, "1")).toThrow(AnswerTooLongError);
  });

  it("textual pre-matching keeps multiset counts: {1,1,2} is not {1,2,2}", () => {
    expect(mathEqual("{1,1,2}", "{2,1,1}")).toBe(true);
    expect(mathEqual("{1,1,2}", "{1,2,2}")).toBe(false);
  });

  it("does not build a 2·10^8-bit power exactly: ((10^400)^400)^400 is refused for its size and compares as text", () => {
    expect(scalarEqual("((10^400)^400)^400", "1")).toEqual({ equal: false, method: "text" });
    // Small exact powers still compare exactly.
    expect(checkEquivalence("(2^10)^3", "1073741824").method).toBe("exact");
  });

  it("huge exponents and factorials evaluate to a bounded result", () => {
    expect(scalarEqual("1000000!", "1").equal).toBe(false);
    expect(scalarEqual("10^10^10", "1").equal).toBe(false);
    expect(scalarEqual("(9^9)^9^9", "1").equal).toBe(false);
  });

  it("takes no exact value of a short literal with a huge exponent (9.9e99999999 took 165 s and 3.4 GB)", () => {
    expect(verifyMath("1", "9.9e99999999").equal).toBe(false);
    expect(verifyMath("9.9e99999999", "9.9e99999999").equal).toBe(true);
    // Too large or small to take exactly, it is only its own text: not 0, not another giant.
    expect(verifyMath("0", "1e-999999").equal).toBe(false);
    expect(verifyMath("0", "10^{-10^{10}}").equal).toBe(false);
    expect(verifyMath("10^{10^{10}}", "10^{10^{11}}").equal).toBe(false);
    expect(verifyMath("\\infty", "10^{10^{10}}").equal).toBe(false);
    // Large exact values stay exact (2^1000 had been compared in floating point, where +1 vanishes).
    expect(verifyMath("2^{1000}", "2^{1000}+1").equal).toBe(false);
    expect(verifyMath("2^{1000}", "(2^{500})^2").equal).toBe(true);
    expect(verifyMath("-1", "(-1)^{10^{10}+1}").equal).toBe(true);
  });

  it("bounds mathjs's combinations: \\binom{10^9}{5·10^8} (106 s before) is past any double at once", () => {
    expect(verifyMath("1", "\\binom{10^{9}}{5 \\cdot 10^{8}}").equal).toBe(false);
    expect(verifyMath("\\binom{5}{2}", "10").equal).toBe(true);
    expect(verifyMath("\\binom{60}{30}", "118264581564861424").equal).toBe(true);
  });

  // Nesting at the size caps: the whole 10,000-deep \frac is refused by length before any
  // parse; what fits in MATH_ANSWER_MAX_CHARS is parsed (mathjs's recursion fails safely).
  it.each([
    ["\\frac 10,000 deep", "\\frac{".repeat(10_000) + "1" + "}{2}".repeat(10_000)],
    ["\\frac 10,000 deep in a box", `\\boxed{${"\\frac{".repeat(10_000)}1${"}{2}".repeat(10_000)}}`],
    ["\\frac 180 deep", "\\frac{".repeat(180) + "1" + "}{2}".repeat(180)],
    ["brackets 990 deep", "(".repeat(990) + "1" + ")".repeat(990)],
    ["braces 600 deep", "\\{".repeat(600) + "1" + "\\}".repeat(600)],
    ["subscripts 600 deep", "x_{".repeat(600) + "1" + "}".repeat(600)],
    ["60 sums", `${"\\sum_{k=1}^{n} k + ".repeat(60)}1`],
    ["a power tower", "2^{2^{2^{2^{2^{2^{2}}}}}}"],
    ["a factorial tower", "((1000!)!)!"],
    ["glued connectives", `${"x=1or".repeat(300)}x=2`],
    ["a 1 MB answer", "1".repeat(1_000_000)],
  ])("answers %s with a verdict or a refusal, in bounded work", (_name, text) => {
    let outcome: unknown;
    try {
      outcome = verifyMath("1", text).equal;
    } catch (err) {
      outcome = err;
    }
    expect(outcome === false || outcome instanceof AnswerTooLongError, String(outcome)).toBe(true);
  });

  it("verifyMath refuses a text past MATH_TEXT_MAX_CHARS, and an extracted answer past MATH_ANSWER_MAX_CHARS too", () => {
    expect(() => verifyMath("1", "1".padEnd(MATH_TEXT_MAX_CHARS + 1, " "))).toThrow(AnswerTooLongError);
    expect(() => verifyMath("1".padEnd(MATH_TEXT_MAX_CHARS + 1, " "), "1")).toThrow(/reference answer/);
    expect(() => verifyMath("1", `\\boxed{${"1+".repeat(MATH_ANSWER_MAX_CHARS)}1}`)).toThrow(/answer is 4001 characters, past this environment's limit of 2000/);
  });

  // Each of these made an extractor that rescans from every opening delimiter quadratic
  // (the first, ~33,000 unclosed `\(`, did before the span scan remembered its searches);
  // they now take milliseconds. No timing is asserted: the test's timeout is the guard.
  it.each([
    ["unclosed \\(", "\\( ".repeat(33_000)],
    ["dollars across lines", "$ x\n".repeat(24_000)],
    ["a run of dollars", "$".repeat(99_000)],
    ["unclosed \\[", "\\[ 1 ".repeat(19_000)],
    ["unclosed boxes", "\\boxed{".repeat(14_000)],
    ["closed boxes far apart", "\\boxed{1} x ".repeat(8_000)],
    ["spans joined as a list", "$1$, ".repeat(19_000)],
    ["one long expression", "1-".repeat(49_000)],
    ["digit groups", `${"100 ".repeat(24_000)}1000`],
    ["answer anchors", "answer ".repeat(14_000)],
    ["final answer anchors", "final answer is ".repeat(6_000)],
    ["a chain of relations", `$${"<".repeat(1_990)}$`],
    ["unclosed matrices", `$${"\\begin{pmatrix}".repeat(120)}$`],
  ])("extracts from %s in bounded work", (_name, text) => {
    // A verdict, or the refusal of a text whose only reading is past MATH_ANSWER_MAX_CHARS.
    let outcome: unknown;
    try {
      outcome = verifyMath("1", text).equal;
    } catch (err) {
      outcome = err;
    }
    expect(typeof outcome === "boolean" || outcome instanceof AnswerTooLongError, String(outcome)).toBe(true);
  });
});
