import { AnswerTooLongError, textWithin } from "../answer-limits.js";
import { asciiMath, lastBoxed, latexToPlain } from "./latex.js";
import { fixIdentifiers, isLabel, scalarEqual, type ScalarMethod, type ScalarOptions } from "./scalar.js";
import { answerShape, MATRIX_CLOSE, MATRIX_OPEN, splitTopLevel, type AnswerShape } from "./structure.js";
import { decimalMath, floatMath } from "./mathjs.js";
import { Rational } from "./rational.js";

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

/** How two answers are compared; every field is optional. */
export interface EquivalenceOptions {
  /**
   * Decimal places a written decimal stands for (math-verify's `float_rounding`): `0.3333`
   * equals `1/3` at 4, not at 6. Without it a decimal is its exact value (`0.3333` ≠ `1/3`).
   */
  precision?: number;
  /**
   * Read the candidate's double inequality as an interval (`-2 \le x \le 7` = `[-2,7]`).
   * The reference's always is; math-verify's `allow_set_relation_comp`, default false.
   */
  relationsAsIntervals?: boolean;
  /**
   * Variables must match by name (default true). With false, expressions compare up to a
   * renaming of their variables in sorted order: `f(x)` = `f(y)` (math-verify's `strict=False`);
   * a function name is a variable too (`f(x)` reads as f·x), so `f(x)` = `g(y)` as well.
   */
  strict?: boolean;
}

function itemCount(shape: AnswerShape): number {
  if (shape.kind === "union") return shape.parts.length;
  if (shape.kind === "scalar") return 1;
  if (shape.kind === "matrix") return shape.rows.reduce((n, row) => n + row.length, 0);
  return shape.items.length;
}

function checkItems(shape: AnswerShape, what: string): void {
  const count = itemCount(shape);
  if (count > MATH_MAX_ITEMS) throw new AnswerTooLongError(what, count, MATH_MAX_ITEMS, "elements");
  if (shape.kind === "union") shape.parts.forEach((part) => checkItems(part, what));
}

/** Text to the form the structure reader and the scalar comparison expect. */
/** Most matrices, rows or cells read from one answer (each is also an element under MATH_MAX_ITEMS). */
const MAX_MATRIX_PARTS = 256;

/** `\begin{pmatrix}a & b \\ c & d\end{pmatrix}` (any matrix or array environment) → `⟦a,b;c,d⟧`. */
function matrices(text: string): string {
  const pattern = /\\begin\{([pbvVB]?matrix|smallmatrix|array)\}(?:\{[^{}]*\})?([^]*?)\\end\{\1\}/g;
  let count = 0;
  return text.replace(pattern, (whole, _env: string, body: string) => {
    if (++count > MAX_MATRIX_PARTS) return whole;
    const rows = body.split(/\\\\/).map((row) => row.trim()).filter((row) => row !== "").slice(0, MAX_MATRIX_PARTS);
    return MATRIX_OPEN + rows.map((row) => row.split("&").map((cell) => cell.trim()).join(",")).join(";") + MATRIX_CLOSE;
  });
}

/**
 * A number with thousands separators and nothing else but a currency sign before or after it
 * and a unit word (`€1,250`, `1,250 dollars`, `$1,250.50`): the number, without separators,
 * with its unit. A list (`1, 250`) or a decimal comma (`1,25`) does not match.
 */
const GROUPED_AMOUNT = /^([€£¥₹]|\\\$|\$)?\s*(-?\d{1,3}(?:,\d{3})+(?:\.\d+)?)\s*([€£¥₹]|\\\$|\$)?(\s+[a-zA-Z]+)?$/;

export function normalizeAnswerText(raw: string): string {
  // An answer written over several lines (`\frac{3}` then `{4}`) is one answer.
  let text = raw.replace(/\s+/g, " ").trim();
  const boxed = lastBoxed(text);
  if (boxed !== null) text = boxed;
  text = matrices(text);
  text = asciiMath(text);
  text = text.replace(/^\\\(|\\\)$/g, "").replace(/^\\\[|\\\]$/g, "");
  // An escaped dollar is a currency sign, never a math delimiter (`1,250\$` in `$…$`).
  text = text.replace(/\\\$/g, " ");
  text = text.replace(/^\$+|\$+$/g, "").trim();
  // Degrees are kept as one mark (scalar.ts reads `60°` as 60 and as π/3); `f \circ g` stays dropped as before.
  text = text.replace(/\^\s*\{?\s*\\circ\s*\}?|\\degree(?![a-zA-Z])/g, "°").replace(/\\circ/g, "");
  // `0.3333\ldots`: the written decimal, as math-verify reads it (a repeating decimal is `0.\overline{3}`).
  text = text.replace(/(\d)\s*(?:\\[lc]?dots|\.\.\.|…)$/, "$1");
  text = latexToPlain(text);
  text = text.replace(/\s+/g, " ").trim();
  text = text.replace(/\.$/, "").trim();
  const amount = GROUPED_AMOUNT.exec(text);
  if (amount) text = `${(amount[2] as string).replace(/,/g, "")}${amount[4] ?? ""}`;
  return text;
}

/** Whitespace-free text: two elements equal here are the same element, no parse needed. */
const sameText = (s: string): string => s.replace(/\s+/g, "");

/**
 * What a relation says about the answer's value, applied to the normalized text:
 * - `x \approx 11` is 11 and `1/3 \approx 0.33` is 1/3 (the exact value before the sign);
 * - a chain `x = 5+5+1 = 11` is its last part;
 * - `x \in [-2,7]` is the interval;
 * - with `intervals`, `-2 <= x <= 7` is `[-2,7]` and `0 < f(x) < 1` is `(0,1)`.
 */
export function relationValue(text: string, intervals: boolean): string {
  let t = text;
  const approx = splitTopLevel(t, /\\approx(?![a-zA-Z])|≈/);
  if (approx.length > 1) {
    const before = approx[0] as string;
    // `\approx 0.3333` on its own is the decimal.
    t = before === "" || isLabel(before) ? (approx[1] as string) : before;
  }
  const member = /^(.*?)(?:\\in(?![a-zA-Z])|∈)(.*)$/.exec(t);
  if (member && isLabel(member[1] as string)) t = (member[2] as string).trim();
  if (!/[,;]|\sand\s|\sor\s/.test(t)) {
    const eq = splitTopLevel(t, /(?<![<>!=])=(?!=)/);
    if (eq.length > 2) t = eq[eq.length - 1] as string;
  }
  if (intervals) {
    const chain = /^(.+?)(<=?|>=?)(.+?)(<=?|>=?)(.+)$/.exec(t);
    if (chain && !/[<>=]/.test(`${chain[1]}${chain[3]}${chain[5]}`) && isLabel(chain[3] as string)) {
      const [, a, op1, middle, op2, b] = chain as unknown as [string, string, string, string, string, string];
      // Lower bound, its bracket, upper bound, its bracket.
      let bounds: [string, string, string, string] | null = null;
      if (op1[0] === "<" && op2[0] === "<") bounds = [a.trim(), op1 === "<" ? "(" : "[", b.trim(), op2 === "<" ? ")" : "]"];
      else if (op1[0] === ">" && op2[0] === ">") bounds = [b.trim(), op2 === ">" ? "(" : "[", a.trim(), op1 === ">" ? ")" : "]"];
      if (bounds && /^\s*\|[^|]+\|\s*$/.test(middle)) {
        // a <= |z| <= b with a a number ≥ 0: z is in [-b,-a] ∪ [a,b]. Any other bound on |z| is left as written.
        const [lo, open, hi, close] = bounds;
        const low = Rational.parseDecimal(lo);
        if (low === null || low.compare(new Rational(0n)) < 0) bounds = null;
        else {
          const mirror = (x: string): string => (x === "0" ? "0" : `-${/^[\d.]+$/.test(x) ? x : `(${x})`}`);
          const flip = (bracket: string): string => (bracket === "(" ? ")" : bracket === "[" ? "]" : bracket === ")" ? "(" : "[");
          t = low.isZero() && open === "[" ? `${flip(close)}${mirror(hi)},${hi}${close}` : `${flip(close)}${mirror(hi)},${mirror(lo)}${flip(open)} \\cup ${open}${lo},${hi}${close}`;
          bounds = null;
        }
      }
      if (bounds) t = `${bounds[1]}${bounds[0]},${bounds[2]}${bounds[3]}`;
    }
  }
  return t.trim();
}

/** readsAsMath's answers by text: a reference is read again for every rollout scored against it. */
const readsCache = new Map<string, boolean>();
const READS_CACHE_SIZE = 512;

/** Whether the text reads as a mathematical value (else it is compared as text). */
export function readsAsMath(text: string): boolean {
  const hit = readsCache.get(text);
  if (hit !== undefined) return hit;
  const reads = readsAsMathUncached(text);
  if (readsCache.size >= READS_CACHE_SIZE) readsCache.clear();
  readsCache.set(text, reads);
  return reads;
}

function readsAsMathUncached(text: string): boolean {
  let shape: AnswerShape;
  try {
    shape = answerShape(relationValue(normalizeAnswerText(textWithin(text, MATH_ANSWER_MAX_CHARS, "answer")), true));
  } catch {
    return false;
  }
  const items = (s: AnswerShape): string[] =>
    s.kind === "scalar" ? [s.text] : s.kind === "union" ? s.parts.flatMap(items) : s.kind === "matrix" ? s.rows.flat() : s.items;
  const all = items(shape);
  if (all.length === 0) return shape.kind === "set";
  return all.every((item) => itemReadsAsMath(item, 0));
}

function itemReadsAsMath(item: string, depth: number): boolean {
  // A tuple inside a list, `(1,2), (3,4)`: its elements must read.
  const inner = answerShape(item);
  if (inner.kind === "bracketed" && depth < 2) return inner.items.every((x) => itemReadsAsMath(x, depth + 1));
  {
    const sides = item
      .replace(/__[\d_]+|_\{[^{}]*\}|_\w/g, "")
      .replace(/\\?%|\$|\\pm|±|°/g, " ")
      .split(/<=|>=|!=|[<>=:]/)
      .map((side) => side.trim());
    if (sides.some((side) => side === "")) return false;
    const plain = sides.join("-");
    if ((plain.match(/[a-zA-Z]{3,}/g) ?? []).some((w) => !KNOWN_WORDS.test(w))) return false;
    try {
      decimalMath().parse(fixIdentifiers(plain));
      return true;
    } catch {
      return false;
    }
  }
}

const KNOWN_WORDS = /^(?:sqrt|nthRoot|pi|sin|cos|tan|sec|csc|cot|log|log10|exp|Infinity|asin|acos|atan|arcsin|arccos|arctan|sinh|cosh|tanh|floor|ceil|combinations|abs|cbrt|sumOf|prodOf)$/;

function matchUnordered(a: readonly string[], b: readonly string[], opts: ScalarOptions): boolean {
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
    const j = b.findIndex((other, k) => !used[k] && itemEqual(item, other, opts));
    if (j < 0) return false;
    used[j] = true;
  }
  return true;
}

/**
 * One element of a list or set: a tuple or interval compares as one (`(0;-2;6)` = `(0, -2, 6)`),
 * up to MATH_MAX_ITEMS elements of its own; anything else as a value.
 */
function itemEqual(a: string, b: string, opts: ScalarOptions): boolean {
  if (/^[([]/.test(a) || /^[([]/.test(b)) {
    const as = answerShape(a);
    const bs = answerShape(b);
    if ((as.kind === "bracketed" || bs.kind === "bracketed") && itemCount(as) <= MATH_MAX_ITEMS && itemCount(bs) <= MATH_MAX_ITEMS) {
      return shapesEqual(as, bs, opts);
    }
  }
  return scalarEqual(a, b, opts).equal;
}

/**
 * A list of solution tuples with one written twice is the same list (`(3,17,3,7)` twice in a
 * list of quadruples); repeated numbers are kept, since `1, 2, 2` may give a root's
 * multiplicity. Only textually identical tuples are merged.
 */
function distinctTuples(items: readonly string[]): string[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    if (!/^[([]/.test(item)) return true;
    const key = sameText(item);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function shapesEqual(c: AnswerShape, g: AnswerShape, opts: ScalarOptions): boolean {
  if (c.kind === "union" || g.kind === "union") {
    const cp = c.kind === "union" ? c.parts : [c];
    const gp = g.kind === "union" ? g.parts : [g];
    if (cp.length !== gp.length) return false;
    const used = new Array<boolean>(gp.length).fill(false);
    return cp.every((part) => {
      const j = gp.findIndex((other, k) => !used[k] && shapesEqual(part, other, opts));
      if (j >= 0) used[j] = true;
      return j >= 0;
    });
  }
  if (c.kind === "matrix" || g.kind === "matrix") {
    if (c.kind !== "matrix" || g.kind !== "matrix" || c.rows.length !== g.rows.length) return false;
    return c.rows.every((row, r) => {
      const other = g.rows[r] as string[];
      return row.length === other.length && row.every((cell, k) => scalarEqual(cell, other[k] as string, opts).equal);
    });
  }
  if (c.kind === "bracketed" || g.kind === "bracketed") {
    if (c.kind !== "bracketed" || g.kind !== "bracketed") return false;
    if (c.open !== g.open || c.close !== g.close || c.items.length !== g.items.length) return false;
    return c.items.every((item, k) => scalarEqual(item, g.items[k] as string, opts).equal);
  }
  const items = (s: AnswerShape): string[] => (s.kind === "scalar" ? [s.text] : s.kind === "set" ? s.items : s.kind === "list" ? distinctTuples(s.items) : []);
  return matchUnordered(items(c), items(g), opts);
}

/**
 * Sums and products of numeric matrices, evaluated: `⟦1,2;3,4⟧ + ⟦5,6;7,8⟧` → `⟦6,8;10,12⟧`,
 * `⟦1,0;0,1⟧ ⟦1,0;0,1⟧` (written side by side) → their product. Text without two matrices,
 * with a variable in a cell, or that mathjs cannot evaluate to a matrix, is left as it is.
 */
function matrixArithmetic(text: string): string {
  if (text.indexOf(MATRIX_OPEN) === text.lastIndexOf(MATRIX_OPEN)) return text;
  if (/[a-zA-Z]/.test(text.replace(/sqrt|pi/g, ""))) return text;
  const expr = text
    .replace(new RegExp(`${MATRIX_CLOSE}\\s*${MATRIX_OPEN}`, "g"), `${MATRIX_CLOSE}*${MATRIX_OPEN}`)
    .replace(new RegExp(`${MATRIX_OPEN}([^${MATRIX_OPEN}${MATRIX_CLOSE}]*)${MATRIX_CLOSE}`, "g"), (_m, body: string) => `[[${body.split(";").join("],[")}]]`);
  try {
    const value = floatMath().evaluate(expr) as { toArray?: () => unknown };
    const rows = value?.toArray?.();
    if (!Array.isArray(rows) || !rows.every((row) => Array.isArray(row) && row.every((x) => typeof x === "number" && Number.isFinite(x)))) return text;
    return MATRIX_OPEN + (rows as number[][]).map((row) => row.join(",")).join(";") + MATRIX_CLOSE;
  } catch {
    return text;
  }
}

/**
 * Solutions written as groups of assignments, `p=5,q=2; p=7,q=2`, as the tuples they are:
 * `(5,2),(7,2)`. Only when there are several `;`-separated groups naming the same variables
 * in the same order; anything else is left as it is.
 */
function assignmentTuples(text: string): string {
  const groups = splitTopLevel(text, ";");
  if (groups.length < 2 || groups.length > MATH_MAX_ITEMS) return text;
  let names: string | null = null;
  const tuples: string[] = [];
  for (const group of groups) {
    const pairs = splitTopLevel(group, ",").map((item) => /^([a-zA-Z]\w*)\s*=\s*([^=]+)$/.exec(item.trim()));
    if (pairs.length < 2 || pairs.some((m) => m === null)) return text;
    const these = pairs.map((m) => (m as RegExpExecArray)[1]).join(",");
    if (names !== null && these !== names) return text;
    names = these;
    tuples.push(`(${pairs.map((m) => ((m as RegExpExecArray)[2] as string).trim()).join(",")})`);
  }
  return tuples.join(",");
}

/** `(p,q) = (3,2)` against `(3,2)`: when only one side is `label = value` (or `number = value`), its value is the answer. */
function dropOneSidedLabel(c: string, g: string): [string, string] {
  const labelled = (t: string): string | null => {
    const parts = splitTopLevel(t, /(?<![<>!=])=(?!=)/);
    if (parts.length !== 2 || /[<>]/.test(t)) return null;
    const lhs = parts[0] as string;
    // A label (`(p,q) =`), or a computation shown before its numeric result
    // (`\frac{1}{2} \$ = \frac{10}{9}`, `7 + 5 = 12`; not `7 = 11a+c`): the value is the right side.
    const rhs = parts[1] as string;
    const numeric = (x: string): boolean => /\d/.test(x) && !/[a-zA-Z]/.test(x);
    return isLabel(lhs) || (numeric(lhs) && numeric(rhs)) ? rhs : null;
  };
  const cl = labelled(c);
  const gl = labelled(g);
  if (cl !== null && gl === null && !/=/.test(g)) return [cl, g];
  if (gl !== null && cl === null && !/=/.test(c)) return [c, gl];
  return [c, g];
}

/** An interval, `(2, \infty)`, or a union of intervals. */
function isInterval(shape: AnswerShape): boolean {
  if (shape.kind === "union") return shape.parts.every(isInterval);
  return shape.kind === "bracketed" && shape.items.length === 2;
}

/** `x > 2` → `(2,Infinity)`, `3 >= y` → `(-Infinity,3]`: one inequality between a name and a bound, as an interval; else null. */
function inequalityInterval(text: string): string | null {
  const m = /^([^<>=!]+?)\s*(<=|>=|<|>)\s*([^<>=!]+)$/.exec(text.trim());
  if (!m) return null;
  const [, lhs, sign, rhs] = m as unknown as [string, string, string, string];
  const flip: Record<string, string> = { "<": ">", ">": "<", "<=": ">=", ">=": "<=" };
  let op: string;
  let bound: string;
  if (isLabel(lhs) && !isLabel(rhs)) [op, bound] = [sign, rhs.trim()];
  else if (isLabel(rhs) && !isLabel(lhs)) [op, bound] = [flip[sign] as string, lhs.trim()];
  else return null;
  if (op === "<") return `(-Infinity,${bound})`;
  if (op === "<=") return `(-Infinity,${bound}]`;
  if (op === ">") return `(${bound},Infinity)`;
  return `[${bound},Infinity)`;
}

export function checkEquivalence(candidate: string | null | undefined, gold: string, options: EquivalenceOptions = {}): Equivalence {
  if (candidate == null || candidate.trim() === "") return { equal: false, method: "empty" };
  const opts: ScalarOptions = { precision: options.precision, strict: options.strict ?? true };
  const c = relationValue(normalizeAnswerText(textWithin(candidate, MATH_ANSWER_MAX_CHARS, "answer")), options.relationsAsIntervals ?? false);
  const g = relationValue(normalizeAnswerText(textWithin(gold, MATH_ANSWER_MAX_CHARS, "reference answer")), true);
  const [cv, gv] = dropOneSidedLabel(assignmentTuples(c), assignmentTuples(g)).map(matrixArithmetic) as [string, string];
  let cs = answerShape(cv);
  let gs = answerShape(gv);
  // A single inequality against an interval is the interval it describes: the reference's
  // always (`x > 2` takes `(2, \infty)`), the candidate's with relationsAsIntervals, as math-verify.
  const gi = isInterval(cs) ? inequalityInterval(gv) : null;
  if (gi !== null) gs = answerShape(gi);
  const ci = options.relationsAsIntervals && isInterval(gs) ? inequalityInterval(cv) : null;
  if (ci !== null) cs = answerShape(ci);
  checkItems(cs, "answer");
  checkItems(gs, "reference answer");
  if (cs.kind === "scalar" && gs.kind === "scalar") return scalarEqual(cs.text, gs.text, opts);
  return { equal: shapesEqual(cs, gs, opts), method: "structure" };
}

/** @example mathEqual("\\boxed{\\dfrac{1}{2}}", "0.5") // true */
export function mathEqual(candidate: string | null | undefined, gold: string): boolean {
  return checkEquivalence(candidate, gold).equal;
}
