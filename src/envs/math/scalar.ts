import type { MathNode } from "mathjs";
import { createRng } from "../rng.js";
import { decimalMath, floatMath } from "./mathjs.js";
import { Rational } from "./rational.js";

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
  text = text.replace(/\\\$|\$/g, "").trim();
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
  return { expr: fixIdentifiers(text), percent, raw: text };
}

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

function toRational(node: MathNode): Rational | null {
  const n = node as unknown as { type: string; value?: { toFraction?: () => [unknown, unknown] }; fn?: string; args?: MathNode[]; content?: MathNode };
  switch (n.type) {
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

const REL_TOL = 1e-9;

function close(a: number, b: number): boolean {
  if (a === b) return true; // also equal infinities
  if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
  return Math.abs(a - b) <= REL_TOL * Math.max(1, Math.abs(a), Math.abs(b));
}

function closeComplex(a: Complexish, b: Complexish): boolean {
  return close(a.re, b.re) && close(a.im, b.im);
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
  let valid = 0;
  let ratio: Complexish | null = null;
  for (let k = 0; k < SAMPLES.length; k++) {
    const va = as[k];
    const vb = bs[k];
    if (!va || !vb || ![va.re, va.im, vb.re, vb.im].every(Number.isFinite)) continue;
    // One side real and the other not: a real root (`\sqrt[3]{x}^2`) against a principal
    // complex power (`x^{2/3}`) at a negative point; the point says nothing, at least 4 others must.
    if ((Math.abs(va.im) < 1e-12) !== (Math.abs(vb.im) < 1e-12)) continue;
    valid++;
    if (!equations) {
      if (!closeComplex(va, vb)) return false;
      continue;
    }
    // Equations: lhs−rhs of one is a nonzero constant times the other's.
    const aZero = Math.hypot(va.re, va.im) < 1e-12;
    const bZero = Math.hypot(vb.re, vb.im) < 1e-12;
    if (aZero || bZero) {
      if (aZero !== bZero) return false;
      continue;
    }
    const den = va.re * va.re + va.im * va.im;
    const r = { re: (vb.re * va.re + vb.im * va.im) / den, im: (vb.im * va.re - vb.re * va.im) / den };
    if (positiveFactor && !(r.re > 0 && Math.abs(r.im) < 1e-12)) return false;
    if (!ratio) ratio = r;
    else if (!closeComplex(ratio, r)) return false;
  }
  return valid >= 4;
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

  // A percent sign on one side only: 25% equals both 25 and 0.25.
  const hundred = new Rational(100n);
  const cr = rationalOf(cNode);
  const gr = rationalOf(gNode);
  if (cr && gr) {
    const equal = cr.equals(gr) || (g.percent && !c.percent && cr.equals(gr.div(hundred))) || (c.percent && !g.percent && cr.div(hundred).equals(gr));
    if (equal || precision === undefined || !(hasDecimal(c.raw) || hasDecimal(g.raw))) return { equal, method: "exact" };
    // A decimal stands for its value at the stated precision: 0.3333 is 1/3 to 4 places.
    return { equal: roundRational(cr, precision).equals(roundRational(gr, precision)), method: "rounded" };
  }
  // A value too large (or small) to take exactly, `9.9e99999999`, `2^{10^{10}}`,
  // `10^{-10^{10}}`: in floating point it is Infinity or 0 and would equal any other such
  // value or 0 itself, so only the same text is the same answer.
  if (tooLarge.has(cNode) || tooLarge.has(gNode)) return { equal: false, method: "text" };
  const cv = parseFloatExpr(c.expr);
  const gv = parseFloatExpr(g.expr);
  const a = cv ? evaluateAt(cv, {}) : null;
  const b = gv ? evaluateAt(gv, {}) : null;
  if (!a || !b) return { equal: normalizedText(candidateRaw) === normalizedText(goldRaw), method: "text" };
  const scaled = (v: Complexish, f: number): Complexish => ({ re: v.re * f, im: v.im * f });
  const equal = closeComplex(a, b) || (g.percent && !c.percent && closeComplex(a, scaled(b, 0.01))) || (c.percent && !g.percent && closeComplex(scaled(a, 0.01), b));
  if (equal || precision === undefined || !(hasDecimal(c.raw) || hasDecimal(g.raw))) return { equal, method: "numeric" };
  return { equal: roundedEqual(a.re, b.re, precision) && roundedEqual(a.im, b.im, precision), method: "rounded" };
}
