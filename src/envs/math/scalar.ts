import type { MathNode } from "mathjs";
import { createRng } from "../rng.js";
import { decimalMath, floatMath } from "./mathjs.js";
import { preciselyEqual, preciseRatio, ratioPositive, ratiosAgree } from "./precise.js";
import { Rational } from "./rational.js";
import { splitTopLevel } from "./structure.js";

/**
 * Comparison of single values: numbers exactly (as rationals) when both sides are
 * rational, irrational constants numerically, and expressions with variables by
 * evaluating both at fixed sample points.
 */

/** Names that are not free variables (the only names `fixIdentifiers` keeps whole; mathjs.ts builds them all). */
export const KNOWN_NAMES: ReadonlySet<string> = new Set([
  "pi", "e", "i", "Infinity", "sqrt", "nthRoot", "cbrt", "log", "log10", "log2", "exp", "abs",
  "sin", "cos", "tan", "sec", "csc", "cot", "asin", "acos", "atan", "arcsin", "arccos", "arctan",
  "sinh", "cosh", "tanh", "floor", "ceil", "combinations", "sumOf", "prodOf",
]);
/** Other spellings, rewritten to the known name before mathjs sees them. */
export const FUNCTION_ALIASES: Readonly<Record<string, string>> = { arcsin: "asin", arccos: "acos", arctan: "atan", ln: "log", inf: "Infinity", infty: "Infinity" };

/**
 * Short unit symbols dropped after a number even when written against it ("12cm", "5 m").
 * Other words are dropped only when separated by a space and at least three letters long
 * ("12 apples", "3.5 hours"), so `3xy` keeps its variables.
 */
const UNIT_SYMBOLS = new Set([
  "m", "cm", "mm", "km", "dm", "g", "kg", "mg", "lb", "lbs", "oz", "ft", "in", "yd", "mi", "mph", "kph", "kmh",
  "s", "h", "hr", "hrs", "min", "mins", "sec", "secs", "ms", "l", "L", "ml", "mL", "cc", "sq", "cu", "deg", "usd", "USD",
  "K", "A", "V", "W", "J", "N", "Hz", "kW", "kWh",
]);

export interface PreparedScalar {
  /** A plain expression for mathjs. */
  expr: string;
  /** The value was written with a percent sign. */
  percent: boolean;
  /**
   * A percentage figure: a plain number (`25`, `12.5`, a mixed number) with the sign, whose
   * sign may be dropped (`25%` = `25`). A fraction or expression with a percent sign is only
   * its value: `3/4%` is 0.0075, never 3/4.
   */
  percentFigure: boolean;
  /** The value was written in degrees (`60^\circ`, `60°`, `60 degrees`). */
  degrees: boolean;
  /** The cleaned text before identifiers were split for implicit multiplication. */
  raw: string;
}

function stripTrailingUnits(text: string): string {
  let out = text;
  for (let k = 0; k < 4; k++) {
    const m = /(\s*)(?:per\s+)?([a-zA-Z]+)\.?(?:\^\(?[23]\)?|[23])?(?:\s*\/\s*[a-zA-Z]+(?:\^\(?[23]\)?)?)?\s*$/.exec(out);
    if (!m || m.index === 0) break;
    const word = m[2] as string;
    if (KNOWN_NAMES.has(word)) break;
    const spaced = (m[1] as string).length > 0;
    if (!UNIT_SYMBOLS.has(word) && !(spaced && word.length >= 3)) break;
    out = out.slice(0, m.index);
  }
  // Only a number (or a bracketed value) may be left in front of the units.
  return /[\d)]\s*$/.test(out) ? out : text;
}

/** True when the text has no letters but known constants and functions. */
function isVariableFree(text: string): boolean {
  return (text.match(/[a-zA-Z]+/g) ?? []).every((w) => KNOWN_NAMES.has(w));
}

/**
 * Cleans one value: `x = 5` → `5`, `50\%` → 50 (percent), `1,000` → 1000, `1 1/2` → 1+1/2,
 * and drops trailing unit words when what is left is a number.
 */
export function prepareScalar(raw: string, opts: { keepLabel?: boolean } = {}): PreparedScalar {
  let text = raw.trim().replace(/\.\s*$/, "").trim();
  // A leading "x =" (one name, one equals sign) is a label, not part of the value; so is
  // any left side without digits or arithmetic: `f(x) =`, `|AB| =`, `V_{1}:V_{2} =`, `(p,q) =`.
  const assignment = /^([^=<>!]+)=\s*([^=]+)$/.exec(text);
  if (assignment && !opts.keepLabel && isLabel(assignment[1] as string)) text = (assignment[2] as string).trim();
  let percent = false;
  if (/\\?%/.test(text)) {
    percent = true;
    text = text.replace(/\\?%/g, " ").trim();
  }
  let degrees = false;
  text = text.replace(/°|\s*\b(?:degrees?|deg)\s*$/g, () => {
    degrees = true;
    return " ";
  }).trim();
  text = text.replace(/\\\$|[$€£¥₹]/g, "").trim();
  const unitless = stripTrailingUnits(text);
  if (unitless !== text && isVariableFree(unitless)) text = unitless.trim();
  text = text.replace(/\b(?:percent|per cent)\b/g, () => {
    percent = true;
    return "";
  }).trim();
  // Thousands separators: 1,000 and the SI / LaTeX spaced forms 1 000 and 5\,000.
  if (/^[+-]?\d{1,3}([, ]\d{3})+(\.\d+)?$/.test(text)) text = text.replace(/[, ]/g, "");
  const mixed = /^([+-]?)(\d+)\s+(\d+)\s*\/\s*(\d+)$/.exec(text);
  if (mixed) text = `${mixed[1]}(${mixed[2]} + ${mixed[3]}/${mixed[4]})`;
  const percentFigure = percent && (PLAIN_NUMBER.test(text) || MIXED_NUMBER.test(text));
  return { expr: fixIdentifiers(text), percent, percentFigure, degrees, raw: text };
}

/** A number written in digits: `25`, `-12.5`, `.5`. */
const PLAIN_NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;
/** A mixed number as latex.ts and prepareScalar write it: `(33 + ((1)/(3)))`, `(1 + 1/2)`. */
const MIXED_NUMBER = /^[+-]?\(\s*\d+\s*\+\s*(?:\(\(\d+\)\/\(\d+\)\)|\d+\/\d+)\s*\)$/;

/** A left side that names what the answer is, not part of its value: letters, subscripts, brackets, `:` `,` `|`. */
export function isLabel(lhs: string): boolean {
  const bare = lhs.replace(/__[\d_]+|_\{[^{}]*\}|_\w/g, "").trim();
  return /[a-zA-Z]/.test(bare) && /^[a-zA-Z()[\]{}|:,/\s\\]+$/.test(bare);
}

function hasProse(text: string): boolean {
  return (text.match(/[a-zA-Z]{3,}/g) ?? []).some((w) => !KNOWN_NAMES.has(FUNCTION_ALIASES[w] ?? w));
}

/**
 * Implicit multiplication between letters the way answers are written: `xy` → `x*y`,
 * `x(x+1)` → `x*(x+1)`; known function and constant names are kept.
 */
export function fixIdentifiers(text: string): string {
  // A subscript in its code form (`F__110_45_49`, see latex.ts) stays on its last letter.
  return text.replace(/([a-zA-Z]+)(__[\d_]+)?(\s*\()?/g, (whole, name: string, sub: string | undefined, paren: string | undefined) => {
    const alias = FUNCTION_ALIASES[name] ?? name;
    if (KNOWN_NAMES.has(alias) && !sub) return alias + (paren ?? "");
    const letters = (alias.length > 1 ? alias.split("").join("*") : alias) + (sub ?? "");
    return paren ? `${letters}*${paren.trim()}` : letters;
  });
}

/** Free variables of a parsed expression (function names excluded). */
function freeSymbols(node: MathNode): Set<string> {
  const names = new Set<string>();
  node.traverse((n, path, parent) => {
    if (n.type === "SymbolNode" && !(parent?.type === "FunctionNode" && path === "fn")) {
      const name = (n as unknown as { name: string }).name;
      if (!KNOWN_NAMES.has(name)) names.add(name);
    }
  });
  return names;
}

/**
 * Largest exact power toRational computes, in bits of the result. `((10^400)^400)^400`
 * is 2^(2·10^8) bits and took seconds of BigInt work on the event loop; past this cap
 * the value is compared in floating point instead (where it is Infinity).
 */
const MAX_POWER_BITS = 20_000;

/** Largest decimal exponent of a literal toRational takes exactly (10^6000 is ~20,000 bits, as MAX_POWER_BITS). */
const MAX_LITERAL_EXPONENT = 6_000;

const bitLength = (n: bigint): number => (n < 0n ? -n : n).toString(16).length * 4;

/** The exact value of an expression built from decimal literals with + − × ÷ and integer powers, else null. */
/** Set while toRational refuses a value for its size, not for being irrational. */
let refusedForSize = false;

/** Largest n whose n! toRational computes exactly (2000! has ~19,000 bits, as MAX_POWER_BITS). */
const MAX_FACTORIAL = 2_000;

/** n! exactly, for an integer 0 ≤ n ≤ MAX_FACTORIAL; past it refused for its size; null for anything else. */
function factorialOf(a: Rational): Rational | null {
  if (!a.isInteger() || a.num < 0n) return null;
  if (a.num > BigInt(MAX_FACTORIAL)) {
    refusedForSize = true;
    return null;
  }
  let product = 1n;
  for (let k = 2n; k <= a.num; k++) product *= k;
  return new Rational(product);
}

/** C(n, k) exactly for integers 0 ≤ k ≤ n while it stays within MAX_POWER_BITS; past it refused for its size. */
function binomialOf(n: Rational, k: Rational): Rational | null {
  if (!n.isInteger() || !k.isInteger() || k.num < 0n || k.num > n.num) return null;
  const small = k.num < n.num - k.num ? k.num : n.num - k.num;
  if (Number(small) * bitLength(n.num) > MAX_POWER_BITS) {
    refusedForSize = true;
    return null;
  }
  let value = 1n;
  for (let j = 1n; j <= small; j++) value = (value * (n.num - small + j)) / j;
  return new Rational(value);
}

function toRational(node: MathNode): Rational | null {
  const n = node as unknown as { type: string; value?: { toFraction?: () => [unknown, unknown] }; fn?: string | { name?: string }; args?: MathNode[]; content?: MathNode };
  switch (n.type) {
    case "FunctionNode": {
      // `\binom{100}{50}`: an integer, exactly (in floating point C(100,50) + 1 would equal it).
      if (typeof n.fn !== "object" || n.fn?.name !== "combinations" || n.args?.length !== 2) return null;
      const [top, bottom] = n.args.map(toRational);
      return top && bottom ? binomialOf(top, bottom) : null;
    }
    case "ConstantNode": {
      // `9.9e99999999` is a short literal whose exact value has 3·10^8 digits: building it
      // took minutes and gigabytes. Past MAX_LITERAL_EXPONENT it compares in floating point.
      const exponent = (n.value as { e?: unknown } | undefined)?.e;
      if (typeof exponent === "number" && Math.abs(exponent) > MAX_LITERAL_EXPONENT) {
        refusedForSize = true;
        return null;
      }
      const frac = n.value?.toFraction?.();
      if (!frac) return null;
      // decimal.js prints large values in exponent form unless asked for fixed notation.
      const fixed = (d: unknown) => BigInt((d as { toFixed(): string }).toFixed());
      return new Rational(fixed(frac[0]), fixed(frac[1]));
    }
    case "ParenthesisNode":
      return n.content ? toRational(n.content) : null;
    case "OperatorNode": {
      const args = (n.args ?? []).map(toRational);
      if (args.some((a) => a === null)) return null;
      const [a, b] = args as Rational[];
      try {
        switch (n.fn) {
          case "unaryMinus":
            return a ? a.neg() : null;
          case "unaryPlus":
            return a ?? null;
          case "add":
            return a && b ? a.add(b) : null;
          case "subtract":
            return a && b ? a.sub(b) : null;
          case "multiply":
            return a && b ? a.mul(b) : null;
          case "divide":
            return a && b ? a.div(b) : null;
          case "factorial":
            return a ? factorialOf(a) : null;
          case "pow":
            if (!a || !b || !b.isInteger()) return null;
            if (b.num > BigInt(MAX_POWER_BITS) || b.num < -BigInt(MAX_POWER_BITS) || Math.max(bitLength(a.num), bitLength(a.den)) * Math.abs(Number(b.num)) > MAX_POWER_BITS) {
              // 0, 1 and -1 to any power are small; anything else this large is refused for its size.
              if (a.isZero() || (a.den === 1n && (a.num === 1n || a.num === -1n))) return b.num < 0n && a.isZero() ? null : a.num === -1n && b.num % 2n === 0n ? new Rational(1n) : a;
              refusedForSize = true;
              return null;
            }
            return a.pow(b.num);
          default:
            return null;
        }
      } catch {
        return null; // division by zero: not a rational value
      }
    }
    default:
      return null;
  }
}

type Complexish = { re: number; im: number };

function asComplex(value: unknown): Complexish | null {
  if (typeof value === "number") return { re: value, im: 0 };
  if (value && typeof value === "object" && "re" in value && "im" in value) {
    const v = value as { re: unknown; im: unknown };
    if (typeof v.re === "number" && typeof v.im === "number") return { re: v.re, im: v.im };
  }
  return null;
}

/**
 * Tolerance of the double-precision pass, relative to the values' size (or 1). It only
 * rejects: what agrees to it is confirmed at 32 digits (precise.ts), since values that differ
 * by less (`\cos(x + 6.283185307)` against `\cos x`, `e^{50}+1` against `e^{50}`) are
 * different answers. Where that cannot decide (complex values, sums), doubles must agree to
 * TIGHT_TOL instead.
 */
const REL_TOL = 1e-9;
const TIGHT_TOL = 1e-12;

function close(a: number, b: number, tol = REL_TOL): boolean {
  if (a === b) return true; // also equal infinities
  if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
  // Relative to the values' size, or to 1 when they are smaller; at TIGHT_TOL (used where
  // nothing confirms it) to 1e-3 (`e^{i\pi} + 1` is 1.2e-16 off 0 in doubles).
  return Math.abs(a - b) <= tol * Math.max(tol === TIGHT_TOL ? 1e-3 : 1, Math.abs(a), Math.abs(b));
}

function closeComplex(a: Complexish, b: Complexish, tol = REL_TOL): boolean {
  return close(a.re, b.re, tol) && close(a.im, b.im, tol);
}

/**
 * Parsed and compiled expressions by their text. A set answer compares each element with
 * several others, and parsing dominates one comparison; with these caches an element is
 * parsed once per check (and across checks while it stays in the bounded cache), so
 * matching n elements costs n parses plus cheap evaluations, not n² parses.
 */
const PARSE_CACHE_SIZE = 512;
const floatParsed = new Map<string, MathNode | null>();
const decimalParsed = new Map<string, MathNode | null>();
const compiled = new WeakMap<MathNode, ReturnType<MathNode["compile"]>>();

function cachedParse(cache: Map<string, MathNode | null>, parse: (expr: string) => MathNode, expr: string): MathNode | null {
  const hit = cache.get(expr);
  if (hit !== undefined) return hit;
  let node: MathNode | null;
  try {
    node = parse(expr);
  } catch {
    node = null;
  }
  if (cache.size >= PARSE_CACHE_SIZE) cache.clear();
  cache.set(expr, node);
  return node;
}

function compiledOf(node: MathNode): ReturnType<MathNode["compile"]> {
  let code = compiled.get(node);
  if (!code) {
    code = node.compile();
    compiled.set(node, code);
  }
  return code;
}

const rationals = new WeakMap<MathNode, Rational | null>();
const symbols = new WeakMap<MathNode, Set<string>>();

/** toRational of a cached parse, computed once per node. */
const tooLarge = new WeakSet<MathNode>();

function rationalOf(node: MathNode): Rational | null {
  if (!rationals.has(node)) {
    refusedForSize = false;
    rationals.set(node, toRational(node));
    if (refusedForSize) tooLarge.add(node);
  }
  return rationals.get(node) ?? null;
}

function freeSymbolsOf(node: MathNode): Set<string> {
  let names = symbols.get(node);
  if (!names) {
    names = freeSymbols(node);
    symbols.set(node, names);
  }
  return names;
}

function evaluateAt(node: MathNode, scope: Record<string, unknown>): Complexish | null {
  try {
    return asComplex(compiledOf(node).evaluate({ ...scope }));
  } catch {
    return null;
  }
}

/** Sample points: fixed, so a comparison gives the same verdict on every run. */
const SAMPLES = (() => {
  const rng = createRng(0x6d617468);
  return Array.from({ length: 8 }, () => Array.from({ length: 8 }, () => (rng.next() < 0.25 ? -1 : 1) * (0.3 + rng.next() * 2.7)));
})();

/**
 * A sum or product at a sample point (latex.ts writes `\sum_{k=a}^{b} body` as
 * `sumOf(body, k, a, b)`): not its value but a fixed transcendental function of the body's
 * value, the index's value and the bounds, so that two sums agree at every point only when
 * their bodies, indices and bounds do. NaN (the point is skipped) for non-real arguments.
 */
const opaqueSum = (salt: number) => (...args: unknown[]): number => {
  if (args.length !== 4 || !args.every((n) => typeof n === "number" && Number.isFinite(n))) return Number.NaN;
  const [bx, bv, ba, bb] = args as [number, number, number, number];
  return Math.sin(1.37 * bx + 0.61 * bv + salt) * 2.3 + Math.cos(0.83 * ba - 1.19 * bb + 0.47 * bx * bv) * 1.7 + Math.sin(2.11 * bv - 0.43 * bb + 1.93 * ba + 0.29 * bx);
};
/** Functions the sample scope binds (so no mathjs instance needs them). */
export const SUM_FUNCTIONS: Readonly<Record<string, (...args: unknown[]) => number>> = { sumOf: opaqueSum(0.5), prodOf: opaqueSum(1.9) };

function sampleScope(vars: readonly string[], k: number): Record<string, unknown> {
  const scope: Record<string, unknown> = { ...SUM_FUNCTIONS };
  vars.forEach((v, j) => {
    scope[v] = (SAMPLES[k] as number[])[j % 8] as number;
  });
  return scope;
}

function parseFloatExpr(expr: string): MathNode | null {
  return cachedParse(floatParsed, (e) => floatMath().parse(e), expr);
}

const sampled = new WeakMap<MathNode, Map<string, (Complexish | null)[]>>();

/**
 * The expression's values at every sample point for this list of variables, computed
 * once per (expression, variables): elements of one set share their variables, so each
 * is evaluated 8 times in all rather than 8 times per element it is compared with.
 */
function sampledValues(node: MathNode, vars: readonly string[]): (Complexish | null)[] {
  const key = vars.join(",");
  let byVars = sampled.get(node);
  if (!byVars) {
    byVars = new Map();
    sampled.set(node, byVars);
  }
  let values = byVars.get(key);
  if (!values) {
    values = SAMPLES.map((_, k) => evaluateAt(node, sampleScope(vars, k)));
    byVars.set(key, values);
  }
  return values;
}

/**
 * The sample points where two expressions' values agree in double precision (for equations:
 * where lhs − rhs of one is the same constant times the other's), or null when a point
 * disagrees. Points where either is undefined, or one is real and the other not, are left out.
 */
function doublesAgree(as: readonly (Complexish | null)[], bs: readonly (Complexish | null)[], equations: boolean, positiveFactor: boolean, tol: number): number[] | null {
  const valid: number[] = [];
  let ratio: Complexish | null = null;
  for (let k = 0; k < SAMPLES.length; k++) {
    const va = as[k];
    const vb = bs[k];
    if (!va || !vb || ![va.re, va.im, vb.re, vb.im].every(Number.isFinite)) continue;
    // One side real and the other not: a real root (`\sqrt[3]{x}^2`) against a principal
    // complex power (`x^{2/3}`) at a negative point; the point says nothing, at least 4 others must.
    if ((Math.abs(va.im) < 1e-12) !== (Math.abs(vb.im) < 1e-12)) continue;
    valid.push(k);
    if (!equations) {
      if (!closeComplex(va, vb, tol)) return null;
      continue;
    }
    // Equations: lhs−rhs of one is a nonzero constant times the other's.
    const aZero = Math.hypot(va.re, va.im) < 1e-12;
    const bZero = Math.hypot(vb.re, vb.im) < 1e-12;
    if (aZero || bZero) {
      if (aZero !== bZero) return null;
      continue;
    }
    const den = va.re * va.re + va.im * va.im;
    const r = { re: (vb.re * va.re + vb.im * va.im) / den, im: (vb.im * va.re - vb.re * va.im) / den };
    if (positiveFactor && !(r.re > 0 && Math.abs(r.im) < 1e-12)) return null;
    if (!ratio) ratio = r;
    else if (!closeComplex(ratio, r, tol)) return null;
  }
  return valid;
}

/** Sample points confirmed at 32 digits: a few, as the doubles already agree at all of them. */
const PRECISE_POINTS = 2;

/**
 * What the doubles found equal, again at 32 digits at up to PRECISE_POINTS of the points where
 * both are real: true or false, or null when no point can be evaluated there (complex values,
 * sums) — or, for equations, fewer than two points give a ratio to compare.
 */
function confirmPrecisely(a: string, b: string, varsA: readonly string[], varsB: readonly string[], points: readonly number[], equations: boolean, positiveFactor: boolean): boolean | null {
  const pointOf = (vars: readonly string[], k: number): Record<string, string> =>
    Object.fromEntries(vars.map((v, j) => [v, String((SAMPLES[k] as number[])[j % 8])]));
  let decided = 0;
  let first: Exclude<ReturnType<typeof preciseRatio>, "zero" | "mixed" | null> | null = null;
  for (const k of points) {
    if (decided >= PRECISE_POINTS) break;
    const pointA = pointOf(varsA, k);
    const pointB = pointOf(varsB, k);
    if (!equations) {
      const same = preciselyEqual(a, b, pointA, pointB);
      if (same === false) return false;
      if (same) decided++;
      continue;
    }
    const r = preciseRatio(a, b, pointA, pointB);
    if (r === null || r === "zero") continue;
    if (r === "mixed" || (positiveFactor && !ratioPositive(r)) || (first && !ratiosAgree(first, r))) return false;
    first ??= r;
    decided++;
  }
  return decided >= (equations ? 2 : 1) ? true : null;
}

/** Compares two expressions with variables (or `lhs = rhs` equations, up to a constant factor). */
function symbolicEqual(a: string, b: string, equations: boolean, positiveFactor = false, strict = true): boolean {
  const na = parseFloatExpr(a);
  const nb = parseFloatExpr(b);
  if (!na || !nb) return false;
  let varsA = [...new Set([...freeSymbolsOf(na), ...freeSymbolsOf(nb)])].sort();
  let varsB = varsA;
  if (!strict) {
    // Each side's own variables, matched by sorted position: f(x) against f(y) binds x and y alike.
    varsA = [...freeSymbolsOf(na)].sort();
    varsB = [...freeSymbolsOf(nb)].sort();
    if (varsA.length !== varsB.length) return false;
  }
  const as = sampledValues(na, varsA);
  const bs = sampledValues(nb, varsB);
  const valid = doublesAgree(as, bs, equations, positiveFactor, REL_TOL);
  if (!valid || valid.length < 4) return false;
  const confirmed = confirmPrecisely(a, b, varsA, varsB, valid, equations, positiveFactor);
  if (confirmed !== null) return confirmed;
  return (doublesAgree(as, bs, equations, positiveFactor, TIGHT_TOL)?.length ?? 0) >= 4;
}

type RelationOp = "=" | "!=" | "<" | "<=";
interface Relation {
  lhs: string;
  op: RelationOp;
  rhs: string;
}

/**
 * `lhs op rhs` with one relation sign, `>` and `>=` turned around to `<` and `<=`
 * (`x >= 5` is `5 <= x`), or null.
 */
export function splitRelation(expr: string): Relation | null {
  const signs = [...expr.matchAll(/<=|>=|!=|==|=|<|>/g)];
  if (signs.length !== 1) return null;
  const sign = signs[0] as RegExpMatchArray;
  const lhs = expr.slice(0, sign.index).trim();
  const rhs = expr.slice((sign.index as number) + sign[0].length).trim();
  if (!lhs || !rhs) return null;
  switch (sign[0]) {
    case ">":
      return { lhs: rhs, op: "<", rhs: lhs };
    case ">=":
      return { lhs: rhs, op: "<=", rhs: lhs };
    case "==":
      return { lhs, op: "=", rhs };
    default:
      return { lhs, op: sign[0] as RelationOp, rhs };
  }
}

function normalizedText(text: string): string {
  return text.toLowerCase().replace(/\\text\s*/g, "").replace(/[\s{}]/g, "").replace(/\.$/, "");
}

export type ScalarMethod = "exact" | "numeric" | "rounded" | "symbolic" | "equation" | "text";

/** Decimal places a written decimal is taken to (math-verify's `float_rounding` default). */
export const DEFAULT_PRECISION = 6;

export interface ScalarOptions {
  /** Decimal places a written decimal stands for; without it decimals are exact. */
  precision?: number;
  /** false: variables match by their sorted position, not their names (`f(x)` = `f(y)`). */
  strict?: boolean;
}

/** A decimal literal with digits after the point: a rounded value, compared at the precision. */
const hasDecimal = (raw: string): boolean => /\d*\.\d/.test(raw);

/** `value` rounded half away from zero to `places` decimals, exactly. */
function roundRational(value: Rational, places: number): Rational {
  const scale = 10n ** BigInt(places);
  const scaled = value.mul(new Rational(scale));
  const negative = scaled.num < 0n;
  const abs = negative ? -scaled.num : scaled.num;
  const rounded = (2n * abs + scaled.den) / (2n * scaled.den);
  return new Rational(negative ? -rounded : rounded, scale);
}

function roundedEqual(a: number, b: number, places: number): boolean {
  if (!Number.isFinite(a) || !Number.isFinite(b)) return a === b;
  const scale = 10 ** places;
  return Math.round(a * scale) === Math.round(b * scale);
}

/**
 * `W(x) = 1` against `W(n) = 1`: the same one-letter function on both sides, each at its own
 * one-letter argument, and a value in which that argument does not occur: the function is
 * that constant, whatever its argument is called, so the values compare. Null otherwise
 * (`W(x) = x` against `W(n) = n` stays an equation).
 */
function dummyArgumentValues(c: string, g: string): [string, string] | null {
  const read = (t: string) => /^\s*([a-zA-Z])\s*\(\s*([a-zA-Z])\s*\)\s*=\s*([^=<>!]+)$/.exec(t);
  const cm = read(c);
  const gm = read(g);
  if (!cm || !gm || cm[1] !== gm[1] || cm[2] === gm[2]) return null;
  const free = (m: RegExpExecArray): boolean => !new RegExp(`(?<!\\w)${m[2]}(?!\\w)`).test(fixIdentifiers(m[3] as string));
  return free(cm) && free(gm) ? [(cm[3] as string).trim(), (gm[3] as string).trim()] : null;
}

/** Most parts a ratio is read with (`a:b:c:…`). */
const MAX_RATIO_PARTS = 8;

/** `7:32` → `["7", "32"]`: two or more parts, each a number or numeric expression (no variable, no relation); else null. */
function ratioParts(text: string): string[] | null {
  if (!text.includes(":") || /[=<>]/.test(text)) return null;
  const parts = splitTopLevel(text, ":");
  if (parts.length < 2 || parts.length > MAX_RATIO_PARTS) return null;
  return parts.every((part) => /\d/.test(part) && isVariableFree(prepareScalar(part).expr)) ? parts : null;
}

/** A time of day, `3:45`, `12:00`: two such are compared as written, never as ratios (3:45 is not 1:15). */
const CLOCK = /^\s*\d{1,2}\s*:\s*[0-5]\d\s*$/;

/**
 * Ratios: `7:32` = `14:64` (a:b = c:d when ad = bc; `1:2:3` = `2:4:6` part by part), and a
 * two-part ratio against a value is its quotient (`7:32` = `\frac{7}{32}`, as math-verify
 * reads `:`). Null when neither side is a ratio.
 */
function ratiosEqual(candidate: string, gold: string, options: ScalarOptions): { equal: boolean; method: ScalarMethod } | null {
  const cp = ratioParts(candidate);
  const gp = ratioParts(gold);
  if (!cp && !gp) return null;
  if (cp && gp) {
    if (CLOCK.test(candidate) && CLOCK.test(gold)) return { equal: false, method: "text" };
    if (cp.length !== gp.length) return { equal: false, method: "exact" };
    for (let i = 0; i < cp.length; i++) {
      for (let j = i + 1; j < cp.length; j++) {
        if (!scalarEqual(`(${cp[i]})*(${gp[j]})`, `(${cp[j]})*(${gp[i]})`, options).equal) return { equal: false, method: "exact" };
      }
    }
    return { equal: true, method: "exact" };
  }
  const parts = (cp ?? gp) as string[];
  const other = cp ? gold : candidate;
  if (parts.length !== 2 || other.includes(":")) return { equal: false, method: "exact" };
  const quotient = `(${parts[0]})/(${parts[1]})`;
  return cp ? scalarEqual(quotient, other, options) : scalarEqual(candidate, quotient, options);
}

/** Equal values, or null when the pair could not be compared as math (then text decides). */
/**
 * `precision`: decimal places a written decimal stands for (0.3333 = 1/3 at 4); without it
 * decimals are exact values (0.3333 ≠ 1/3).
 */
export function scalarEqual(candidateRaw: string, goldRaw: string, options: ScalarOptions = {}): { equal: boolean; method: ScalarMethod } {
  const { precision, strict = true } = options;
  if (normalizedText(candidateRaw) === normalizedText(goldRaw)) return { equal: true, method: "text" };
  const dummies = dummyArgumentValues(candidateRaw, goldRaw);
  if (dummies) return scalarEqual(dummies[0], dummies[1], options);
  const ratio = ratiosEqual(candidateRaw, goldRaw, options);
  if (ratio) return ratio;
  // Two equations compare as equations (2x = 4 vs x = 2) before any `x =` label is dropped;
  // two inequalities as inequalities: rhs − lhs of one is a positive multiple of the other's
  // (`-x > -1` is `x < 1`).
  const ce = splitRelation(prepareScalar(candidateRaw, { keepLabel: true }).expr);
  const ge = splitRelation(prepareScalar(goldRaw, { keepLabel: true }).expr);
  if (ce && ge) {
    if (ce.op !== ge.op) return { equal: false, method: "equation" };
    const inequality = ce.op === "<" || ce.op === "<=";
    return { equal: symbolicEqual(`(${ce.rhs})-(${ce.lhs})`, `(${ge.rhs})-(${ge.lhs})`, true, inequality, strict), method: "equation" };
  }
  if (Boolean(ce && ce.op !== "=") !== Boolean(ge && ge.op !== "=")) return { equal: false, method: "equation" };

  const c = prepareScalar(candidateRaw);
  const g = prepareScalar(goldRaw);
  // A word of three or more letters that is no unit, function or constant: this is prose, not math.
  if (hasProse(c.raw) || hasProse(g.raw)) return { equal: false, method: "text" };

  const cNode = cachedParse(decimalParsed, (e) => decimalMath().parse(e), c.expr);
  const gNode = cachedParse(decimalParsed, (e) => decimalMath().parse(e), g.expr);
  if (!cNode || !gNode) return { equal: normalizedText(candidateRaw) === normalizedText(goldRaw) || normalizedText(c.raw) === normalizedText(g.raw), method: "text" };
  const vars = new Set([...freeSymbolsOf(cNode), ...freeSymbolsOf(gNode)]);
  if (vars.size > 0) {
    return { equal: symbolicEqual(c.expr, g.expr, false, false, strict), method: "symbolic" };
  }

  return constantsEqual(c, g, precision);
}

/**
 * The values one side may stand for against the other: its own value; with a percent sign
 * the other side lacks, that value / 100 (and the bare number only for a percentage figure:
 * `25%` = `25`, but `3/4%` is not 3/4); in degrees where the other side is not, also the
 * angle in radians (`60°` = `60` = `\frac{\pi}{3}`).
 */
function readingsOf(p: PreparedScalar, other: PreparedScalar): string[] {
  const percentOnly = p.percent && !other.percent;
  const out = percentOnly && !p.percentFigure ? [] : [p.expr];
  if (percentOnly) out.push(`(${p.expr})/100`);
  if (p.degrees && !other.degrees) out.push(`(${p.expr})*pi/180`);
  return out;
}

/** Two values without variables, under every reading of each (readingsOf). */
function constantsEqual(c: PreparedScalar, g: PreparedScalar, precision: number | undefined): { equal: boolean; method: ScalarMethod } {
  let first: { equal: boolean; method: ScalarMethod } | null = null;
  for (const a of readingsOf(c, g)) {
    for (const b of readingsOf(g, c)) {
      const verdict = valuesEqual(a, b, hasDecimal(c.raw), hasDecimal(g.raw), precision);
      if (verdict.equal) return verdict;
      first ??= verdict;
    }
  }
  return first ?? { equal: false, method: "exact" };
}

/**
 * Two values without variables, candidate `a` and reference `b`:
 * - both rational: exactly; failing that, when either is written as a decimal, rounded to
 *   `precision` places (math-verify's float_rounding: `0.333333` = `1/3` at 6 places);
 * - otherwise in double precision, then confirmed at 32 digits (precise.ts); failing that,
 *   only a reference written as a decimal is matched, within 1e-9 or rounded to `precision`
 *   places (`3.141593` as reference takes `\pi`, but `\pi` as reference does not take
 *   `3.141592654`: an exact irrational reference asks for the exact value).
 */
function valuesEqual(a: string, b: string, aDecimal: boolean, bDecimal: boolean, precision: number | undefined): { equal: boolean; method: ScalarMethod } {
  const aNode = cachedParse(decimalParsed, (e) => decimalMath().parse(e), a);
  const bNode = cachedParse(decimalParsed, (e) => decimalMath().parse(e), b);
  if (!aNode || !bNode) return { equal: false, method: "text" };
  const ar = rationalOf(aNode);
  const br = rationalOf(bNode);
  if (ar && br) {
    if (ar.equals(br)) return { equal: true, method: "exact" };
    if (precision === undefined || !(aDecimal || bDecimal)) return { equal: false, method: "exact" };
    // A decimal stands for its value at the stated precision: 0.3333 is 1/3 to 4 places.
    return { equal: roundRational(ar, precision).equals(roundRational(br, precision)), method: "rounded" };
  }
  // A value too large (or small) to take exactly, `9.9e99999999`, `2^{10^{10}}`,
  // `10^{-10^{10}}`: in floating point it is Infinity or 0 and would equal any other such
  // value or 0 itself, so only the same text is the same answer.
  if (tooLarge.has(aNode) || tooLarge.has(bNode)) return { equal: false, method: "text" };
  const af = parseFloatExpr(a);
  const bf = parseFloatExpr(b);
  const va = af ? evaluateAt(af, {}) : null;
  const vb = bf ? evaluateAt(bf, {}) : null;
  if (!va || !vb) return { equal: false, method: "text" };
  // Different in double precision (both finite): no digits will make them equal. Undefined
  // there (NaN: `\sin(10^{1000})`): not equal. Only agreeing or overflowing values go on.
  const finite = [va.re, va.im, vb.re, vb.im].every(Number.isFinite);
  if ([va.re, va.im, vb.re, vb.im].some(Number.isNaN)) return { equal: false, method: "numeric" };
  // A reference written as a decimal is matched within the double tolerance, or rounded to `precision` places.
  const rounded = (): { equal: boolean; method: ScalarMethod } => {
    if (!bDecimal || !finite) return { equal: false, method: "numeric" };
    if (closeComplex(va, vb)) return { equal: true, method: "numeric" };
    if (precision === undefined) return { equal: false, method: "numeric" };
    return { equal: roundedEqual(va.re, vb.re, precision) && roundedEqual(va.im, vb.im, precision), method: "rounded" };
  };
  if (finite && !closeComplex(va, vb)) return rounded();
  const precise = preciselyEqual(a, b);
  if (precise === true) return { equal: true, method: "numeric" };
  // Not decidable at 32 digits (a complex value, a function decimal.js lacks): doubles decide, tightly.
  if (precise === null && finite && closeComplex(va, vb, TIGHT_TOL)) return { equal: true, method: "numeric" };
  return rounded();
}
