import { AnswerTooLongError, textWithin } from "../answer-limits.js";
import { asciiMath, lastBoxed, latexToPlain } from "./latex.js";
import { scalarEqual, type ScalarMethod } from "./scalar.js";
import { answerShape, type AnswerShape } from "./structure.js";

/**
 * Are two final answers the same mathematical object? The candidate is what a model
 * wrote (often LaTeX, with units, `\boxed{}` or `x =`), the gold is the reference.
 *
 * - Numbers compare exactly as rationals: `0.5` = `1/2` = `\frac{2}{4}` = `5 \times 10^{-1}`,
 *   but `0.333` ≠ `1/3`. `1,000` = `1000`. A percent sign on one side only matches both
 *   readings: `25\%` = `25` = `0.25`.
 * - Irrational constants compare numerically to 1e-9 relative: `\frac{\sqrt{3}}{2}` = `sqrt(3)/2`.
 * - Expressions with variables compare by value at fixed sample points: `2(x+1)` = `2x+2`.
 *   Equations compare up to a constant factor: `2x = 4` = `x - 2 = 0`.
 * - Sets and lists of solutions are unordered (`{1,2}` = `2, 1` = `x=1 or x=2`);
 *   tuples and intervals are ordered and their brackets must match (`(1,2]` ≠ `(1,2)`);
 *   unions of intervals are unordered.
 * - Trailing units, `$`, degrees and `\text{}` words are dropped after a number.
 * - What cannot be read as math compares as text, case- and space-insensitively.
 */
export interface Equivalence {
  equal: boolean;
  /** How the decision was made (for metrics and debugging). */
  method: ScalarMethod | "structure" | "empty";
}

/**
 * Longest answer (candidate or reference) the checker reads, in UTF-16 units. Final
 * answers are a value or a short list; normalizing and splitting are linear, but each
 * element is parsed by mathjs, so the text is capped before any of it.
 */
export const MATH_ANSWER_MAX_CHARS = 2_000;
/**
 * Most elements a set, list, tuple or union may have. Unordered matching compares an
 * element with up to all the other side's unmatched ones: 1,600 elements against the
 * same set reversed took 23 s. At 32 the worst case is ~500 comparisons of cached parses.
 */
export const MATH_MAX_ITEMS = 32;

function checkItems(shape: AnswerShape, what: string): void {
  const count = shape.kind === "union" ? shape.parts.length : shape.kind === "scalar" ? 1 : shape.items.length;
  if (count > MATH_MAX_ITEMS) throw new AnswerTooLongError(what, count, MATH_MAX_ITEMS, "elements");
  if (shape.kind === "union") shape.parts.forEach((part) => checkItems(part, what));
}

/** Text to the form the structure reader and the scalar comparison expect. */
export function normalizeAnswerText(raw: string): string {
  let text = raw.trim();
  const boxed = lastBoxed(text);
  if (boxed !== null) text = boxed;
  text = asciiMath(text);
  text = text.replace(/^\\\(|\\\)$/g, "").replace(/^\\\[|\\\]$/g, "");
  text = text.replace(/^\$+|\$+$/g, "").trim();
  text = text.replace(/\^\s*\{?\s*\\circ\s*\}?/g, "").replace(/\u00b0|\\circ|\\degree/g, "");
  text = latexToPlain(text);
  text = text.replace(/\s+/g, " ").trim();
  text = text.replace(/\.$/, "").trim();
  return text;
}

/** Whitespace-free text: two elements equal here are the same element, no parse needed. */
const sameText = (s: string): string => s.replace(/\s+/g, "");

function matchUnordered(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const used = new Array<boolean>(b.length).fill(false);
  // Identical elements pair off first through a map, so a set against itself reordered
  // costs no comparison at all; only what is left goes through scalarEqual.
  const byText = new Map<string, number[]>();
  b.forEach((item, k) => byText.set(sameText(item), [...(byText.get(sameText(item)) ?? []), k]));
  const rest: string[] = [];
  for (const item of a) {
    const k = byText.get(sameText(item))?.pop();
    if (k === undefined) rest.push(item);
    else used[k] = true;
  }
  for (const item of rest) {
    const j = b.findIndex((other, k) => !used[k] && scalarEqual(item, other).equal);
    if (j < 0) return false;
    used[j] = true;
  }
  return true;
}

function shapesEqual(c: AnswerShape, g: AnswerShape): boolean {
  if (c.kind === "union" || g.kind === "union") {
    const cp = c.kind === "union" ? c.parts : [c];
    const gp = g.kind === "union" ? g.parts : [g];
    if (cp.length !== gp.length) return false;
    const used = new Array<boolean>(gp.length).fill(false);
    return cp.every((part) => {
      const j = gp.findIndex((other, k) => !used[k] && shapesEqual(part, other));
      if (j >= 0) used[j] = true;
      return j >= 0;
    });
  }
  if (c.kind === "bracketed" || g.kind === "bracketed") {
    if (c.kind !== "bracketed" || g.kind !== "bracketed") return false;
    if (c.open !== g.open || c.close !== g.close || c.items.length !== g.items.length) return false;
    return c.items.every((item, k) => scalarEqual(item, g.items[k] as string).equal);
  }
  const items = (s: AnswerShape): string[] => (s.kind === "scalar" ? [s.text] : s.kind === "set" || s.kind === "list" ? s.items : []);
  return matchUnordered(items(c), items(g));
}

export function checkEquivalence(candidate: string | null | undefined, gold: string): Equivalence {
  if (candidate == null || candidate.trim() === "") return { equal: false, method: "empty" };
  const c = normalizeAnswerText(textWithin(candidate, MATH_ANSWER_MAX_CHARS, "answer"));
  const g = normalizeAnswerText(textWithin(gold, MATH_ANSWER_MAX_CHARS, "reference answer"));
  const cs = answerShape(c);
  const gs = answerShape(g);
  checkItems(cs, "answer");
  checkItems(gs, "reference answer");
  if (cs.kind === "scalar" && gs.kind === "scalar") return scalarEqual(cs.text, gs.text);
  return { equal: shapesEqual(cs, gs), method: "structure" };
}

/** @example mathEqual("\\boxed{\\dfrac{1}{2}}", "0.5") // true */
export function mathEqual(candidate: string | null | undefined, gold: string): boolean {
  return checkEquivalence(candidate, gold).equal;
}
