import type { ConfigOptions, FactoryFunctionMap, MathJsFactory, MathJsInstance } from "mathjs";

/**
 * mathjs instances, built on first use from only the functions the equivalence checker
 * and the calculator can evaluate. `create(all)` registers all of mathjs's ~700 factories
 * (built lazily, but units and all included) and puts all of mathjs plus seedrandom in the
 * Worker bundle; the `*Dependencies` maps named below carry just these and what they need,
 * which halves the first use (`npm run bench:mathjs`) and the mathjs part of the bundle.
 *
 * Where the maps come from depends on the runtime, and nothing here imports mathjs's code:
 * - on a Worker, from static imports (mathjs-bundled.ts, installed by the Worker entry with
 *   `useBundledMathjs()`), so esbuild keeps only these factories (it stops tree-shaking a
 *   module imported with import());
 * - on Node, from mathjs's CommonJS files, required on first use (`loadMathjsOnNode`).
 *   Importing the package ("mathjs") runs its whole entry: ~1,000 modules and every one of
 *   its ~700 functions built, over a second, which `edgegym serve` paid at start-up.
 *
 * - `floatMath`: plain IEEE doubles (and complex results, e.g. sqrt(-1)), for evaluating
 *   expressions at sample points and the calculator.
 * - `decimalMath`: BigNumber mode, only for parsing, so a literal like 0.1 or 1.5e3 parses
 *   to an exact decimal that `Rational` can take over without rounding.
 * - `bigMath`: BigNumber mode at a chosen number of significant digits, for evaluating: the
 *   checker confirms there what doubles found equal (`e^{50}` and `e^{50}+1` are one double;
 *   at 32 digits and more they differ), see precise.ts. Built on first such use.
 *
 * A compiled expression looks every function and constant up in its instance, so a name
 * missing here fails at evaluation ("Undefined function"), where the checker falls back
 * to comparing text. The lists must therefore cover:
 * - the checker (`KNOWN_NAMES` in scalar.ts, the only names `fixIdentifiers` lets through
 *   whole; every other identifier becomes single-letter variables, which the sample scope
 *   binds): sqrt nthRoot cbrt log log10 log2 exp abs sin cos tan sec csc cot asin acos atan
 *   sinh cosh tanh floor ceil combinations,
 *   the constants pi e i Infinity;
 * - the calculator's whitelist (`CALCULATOR_FUNCTIONS`, its constants and operators in
 *   calculator.ts);
 * - the operators the parser turns arithmetic into: add subtract multiply (also implicit
 *   multiplication) divide unaryMinus unaryPlus pow mod (`%`, `mod`) factorial (`!`).
 * mathjs.test.ts checks every one of those names against this instance and compares its
 * results with a full `create(all)` instance.
 */
export const MATH_NAMES = [
  // operators
  "add",
  "subtract",
  "multiply",
  "divide",
  "unaryMinus",
  "unaryPlus",
  "pow",
  "mod",
  "factorial",
  // functions
  "sqrt",
  "cbrt",
  "nthRoot",
  "abs",
  "exp",
  "log",
  "log10",
  "log2",
  "sin",
  "cos",
  "tan",
  "sinh",
  "cosh",
  "tanh",
  "sec",
  "csc",
  "cot",
  "asin",
  "acos",
  "atan",
  "atan2",
  "floor",
  "ceil",
  "combinations",
  "round",
  "fix",
  "min",
  "max",
  "gcd",
  "lcm",
  "sign",
  "hypot",
  // constants
  "pi",
  "e",
  "i",
  "Infinity",
  "tau",
  "phi",
  // parsing, evaluating a string, printing a result
  "parse",
  "evaluate",
  "format",
] as const;

export type MathName = (typeof MATH_NAMES)[number];

/** What the instances are built from: mathjs's `create` and the `<name>Dependencies` map of each name. */
export interface MathjsFactories {
  create: MathJsFactory["create"];
  dependencies: Record<MathName, FactoryFunctionMap>;
}

let provided: MathjsFactories | undefined;

/** Builds the instances from `factories` from now on (the Worker entry's `useBundledMathjs()`). */
export function provideMathjs(factories: MathjsFactories): void {
  provided = factories;
  floatInstance = decimalInstance = bigInstance = undefined;
}

/** The `require` of Node (or a runtime that has its `module` built-in), or undefined. */
function nodeRequire(): NodeRequireLike | undefined {
  const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const nodeModule = proc?.getBuiltinModule?.("module") as { createRequire?: (from: string) => NodeRequireLike } | undefined;
  return nodeModule?.createRequire?.(import.meta.url);
}

interface NodeRequireLike {
  (id: string): unknown;
  resolve(id: string): string;
}

/**
 * The maps from the files of mathjs's CommonJS build that define them, beside its entry
 * (lib/cjs/index.js): core/create.js and entry/dependenciesAny/dependencies<Name>.generated.js.
 * These load the factories' code (~700 small modules) but build nothing, a third of what
 * requiring the entry costs. Throws when a file is missing or holds no such map.
 */
export function mathjsFromFiles(load: NodeRequireLike): MathjsFactories {
  const entry = load.resolve("mathjs");
  const dir = entry.slice(0, entry.search(/[\\/][^\\/]*$/) + 1);
  const create = (load(`${dir}core/create.js`) as { create?: unknown }).create;
  if (typeof create !== "function") throw new Error(`no create in ${dir}core/create.js`);
  const dependencies = {} as Record<MathName, FactoryFunctionMap>;
  for (const name of MATH_NAMES) {
    const file = `${dir}entry/dependenciesAny/dependencies${name[0]?.toUpperCase()}${name.slice(1)}.generated.js`;
    const map = (load(file) as Record<string, unknown>)[`${name}Dependencies`];
    if (typeof map !== "object" || map === null) throw new Error(`no ${name}Dependencies in ${file}`);
    dependencies[name] = map as FactoryFunctionMap;
  }
  return { create: create as MathjsFactories["create"], dependencies };
}

/**
 * mathjs on Node, required when an instance is first built: from its files (above), or,
 * should a later mathjs lay them out otherwise, from the package's entry (the same factories).
 */
export function loadMathjsOnNode(): MathjsFactories {
  const load = nodeRequire();
  if (!load) throw new Error("mathjs is not loaded: outside Node, call useBundledMathjs() (envs/math/mathjs-bundled.ts) once at start-up, as the Worker entry does");
  try {
    return mathjsFromFiles(load);
  } catch {
    const mathjs = load("mathjs") as Record<string, unknown> & { create: MathjsFactories["create"] };
    const dependencies = {} as Record<MathName, FactoryFunctionMap>;
    for (const name of MATH_NAMES) dependencies[name] = mathjs[`${name}Dependencies`] as FactoryFunctionMap;
    return { create: mathjs.create, dependencies };
  }
}

function factories(): MathjsFactories {
  provided ??= loadMathjsOnNode();
  return provided;
}

/** Every name's dependency map, as `create` takes them. */
function mathFactories(): FactoryFunctionMap {
  const { dependencies } = factories();
  return Object.fromEntries(MATH_NAMES.map((name) => [`${name}Dependencies`, dependencies[name]])) as FactoryFunctionMap;
}

function create(maps: FactoryFunctionMap, config?: ConfigOptions): MathJsInstance {
  return factories().create(maps, config);
}

/**
 * The factories in `maps`, flattened as `create` flattens them, without the Unit class.
 * SymbolNode takes Unit as an optional dependency (a name that is no variable evaluates
 * to a unit, `5 cm`), and building Unit with its table of units and prefixes is the
 * largest single cost of a first use. Nothing here evaluates units: the checker binds
 * every free name to a number and the calculator refuses unknown names, so without Unit
 * an unbound name fails as "Undefined symbol", which both already treat as not a number.
 */
function withoutUnits(maps: FactoryFunctionMap): FactoryFunctionMap {
  const flat: FactoryFunctionMap = {};
  // Each dependency map nests its dependencies' maps: ~100 distinct maps, ~10,000 paths.
  const seen = new Set<FactoryFunctionMap>();
  const walk = (map: FactoryFunctionMap): void => {
    if (seen.has(map)) return;
    seen.add(map);
    for (const [key, value] of Object.entries(map)) {
      if (typeof value === "object" && value !== null) walk(value as FactoryFunctionMap);
      // A mathjs factory names what it builds in `fn`; the Unit class's is "Unit".
      else if ((value as { fn?: unknown }).fn !== "Unit") flat[key] = value;
    }
  };
  walk(maps);
  return flat;
}

let floatInstance: MathJsInstance | undefined;
let decimalInstance: MathJsInstance | undefined;

/**
 * mathjs's `combinations(n, k)` multiplies k factors one by one: `\binom{10^9}{5 \cdot 10^8}`
 * ran for 106 s. Past this many factors C(n, k) ≥ C(4000, 2000) ≈ 10^1202 is past any
 * double, so it is Infinity without the loop (what the loop would reach anyway).
 */
const MAX_COMBINATION_FACTORS = 2_000;

function boundedCombinations(math: MathJsInstance): (n: unknown, k: unknown) => unknown {
  const exact = math.combinations as (n: unknown, k: unknown) => unknown;
  return (n, k) => {
    if (typeof n === "number" && typeof k === "number" && Number.isInteger(n) && Number.isInteger(k) && k >= 0 && n >= k && Math.min(k, n - k) > MAX_COMBINATION_FACTORS) return Infinity;
    return exact(n, k);
  };
}

export function floatMath(): MathJsInstance {
  if (!floatInstance) {
    const math = create(withoutUnits(mathFactories()));
    math.import({ combinations: boundedCombinations(math) }, { override: true });
    floatInstance = math;
  }
  return floatInstance;
}

/**
 * Largest factorial argument the BigNumber instance computes: mathjs multiplies BigNumber
 * factorials out term by term, so `(10^9)!` would loop for minutes. Past this it throws,
 * which the checker takes as "cannot confirm" (see precise.ts).
 */
const MAX_BIG_FACTORIAL = 5_000;

let bigInstance: MathJsInstance | undefined;
let bigDigits = 0;

/**
 * The BigNumber instance, set to `digits` significant digits (decimal.js rounds every result
 * to them; literals stay exact), or as it is when no digits are given (to parse: a parse does
 * not depend on them). One instance, reconfigured when the digits change: mathjs rebuilds pi
 * and e at the new precision. Combinations and factorial are bounded as above.
 */
export function bigMath(digits?: number): MathJsInstance {
  if (!bigInstance) {
    const math = create(withoutUnits(mathFactories()), { number: "BigNumber", precision: digits ?? 32 });
    const combinations = math.combinations as (n: unknown, k: unknown) => unknown;
    const factorial = math.factorial as (n: unknown) => unknown;
    const big = (x: unknown): number => (typeof x === "object" && x !== null && "toNumber" in x ? (x as { toNumber(): number }).toNumber() : Number(x));
    math.import(
      {
        combinations: (n: unknown, k: unknown) => {
          if (Math.min(big(k), big(n) - big(k)) > MAX_COMBINATION_FACTORS) throw new RangeError("combinations too large to compute exactly");
          return combinations(n, k);
        },
        factorial: (n: unknown) => {
          if (big(n) > MAX_BIG_FACTORIAL) throw new RangeError("factorial too large to compute exactly");
          return factorial(n);
        },
      },
      { override: true },
    );
    bigInstance = math;
    bigDigits = digits ?? 32;
  }
  if (digits !== undefined && bigDigits !== digits) {
    bigInstance.config({ precision: digits });
    bigDigits = digits;
  }
  return bigInstance;
}

export function decimalMath(): MathJsInstance {
  // Only `parse` is used in BigNumber mode (literals become exact decimals; nothing is evaluated).
  decimalInstance ??= create(withoutUnits({ parseDependencies: factories().dependencies.parse } as FactoryFunctionMap), { number: "BigNumber", precision: 64 });
  return decimalInstance;
}
