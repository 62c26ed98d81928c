import { all, create, type FactoryFunctionMap, type MathJsInstance } from "mathjs";
import { describe, expect, it } from "vitest";
import { CALCULATOR_CONSTANTS, CALCULATOR_FUNCTIONS, CALCULATOR_OPERATORS } from "../builtin/tool-math/calculator.js";
import { checkEquivalence } from "./equivalence.js";
import { createRequire } from "node:module";
import { decimalMath, floatMath, loadMathjsOnNode, MATH_NAMES, mathjsFromFiles, type MathjsFactories } from "./mathjs.js";
import { BUNDLED_MATHJS } from "./mathjs-bundled.js";
import { FUNCTION_ALIASES, KNOWN_NAMES, SUM_FUNCTIONS } from "./scalar.js";

// The instances are built from named factories only; a full `create(all)` instance is the
// reference they must agree with wherever the checker or the calculator can reach.
const full = create(all as FactoryFunctionMap);

/** The value printed with its mathjs type, or the error, so results and failures compare alike. */
function outcome(math: MathJsInstance, expr: string, scope: Record<string, number> = {}): string {
  try {
    const value: unknown = math.parse(expr).compile().evaluate({ ...scope });
    return `${math.format(value, { precision: 15, lowerExp: -9, upperExp: 21 })} : ${math.typeOf(value)}`;
  } catch (err) {
    return `error: ${err instanceof Error ? err.message : String(err)}`;
  }
}

describe("the lean mathjs instances", () => {
  it("hold every name the equivalence checker lets through and everything the calculator allows", () => {
    const math = floatMath() as unknown as Record<string, unknown>;
    // arcsin/arccos/arctan are rewritten to asin/acos/atan before parsing (FUNCTION_ALIASES).
    // sumOf/prodOf are bound by the checker's sample scope, not by the instance.
    const checkerNames = [...KNOWN_NAMES].filter((name) => !(name in FUNCTION_ALIASES) && !(name in SUM_FUNCTIONS));
    const names = [...checkerNames, ...CALCULATOR_FUNCTIONS, ...CALCULATOR_CONSTANTS, ...CALCULATOR_OPERATORS, "parse", "evaluate", "format"];
    expect(names.filter((name) => math[name] === undefined)).toEqual([]);
    for (const alias of Object.values(FUNCTION_ALIASES)) expect(math[alias], alias).toBeDefined();
  });

  it("evaluate like a full mathjs instance, results and errors alike", () => {
    const expressions = [
      // the calculator's functions, with ordinary and edge arguments
      "sqrt(2)", "sqrt(-4)", "cbrt(-27)", "nthRoot(16, 4)", "nthRoot(-8, 3)", "abs(-3.5)", "exp(1)", "log(8)", "log(8, 2)", "log(-1)", "log(0)",
      "log10(1000)", "log2(1024)", "sin(pi/6)", "cos(pi)", "tan(pi/4)", "asin(1)", "acos(0)", "atan(1)", "asin(2)", "atan2(1, 1)",
      "floor(-2.5)", "ceil(2.1)", "round(2.567)", "round(2.567, 2)", "fix(-2.5)", "min(3, 1, 2)", "max(3, 1, 2)", "mod(-7, 3)", "10 mod 3", "10 % 3",
      "gcd(12, 18)", "lcm(4, 6)", "gcd(1.5, 3)", "sign(-3)", "hypot(3, 4)", "pow(2, 0.5)", "factorial(5)", "5!", "2.5!", "factorial(-1)", "factorial(171)",
      // the checker's extra names, complex results and constants
      "sec(1)", "csc(1)", "cot(1)", "i^2", "e^(i*pi)", "(-8)^(1/3)", "sqrt(3)/2", "pi", "e", "tau", "phi", "Infinity", "-Infinity", "1/0", "0/0",
      // arithmetic as the checker writes it: implicit multiplication, unary signs, large and tiny numbers
      "2(3 + 4)", "(1 + 2)(3 + 4)", "-(2)", "+3", "2^-1", "1e400", "1e-10", "123456789 * 987654321", "0.1 + 0.2", "0x1F", "1 ? 2 : 3",
      // things the calculator refuses and the checker reads as text: errors or non-numbers either way
      "[1, 2]", "\"a\"", "1 < 2", "(1 < 2) + 1", "nthRoot(16)", "atan2(1)", "min()",
    ];
    const lean = floatMath();
    for (const expr of expressions) expect(outcome(lean, expr), expr).toBe(outcome(full, expr));
    // Free variables come from the scope, as the checker's sample points bind them.
    for (const expr of ["2x + 2", "x y", "sin(x)^2 + cos(x)^2", "nthRoot(x, 3) - cbrt(x)", "E * x"]) {
      expect(outcome(lean, expr, { x: 1.7, y: -0.6, E: 2 }), expr).toBe(outcome(full, expr, { x: 1.7, y: -0.6, E: 2 }));
    }
  });

  it("parse decimal literals exactly in BigNumber mode", () => {
    const node = decimalMath().parse("999999999999999999.5") as unknown as { value: { toFraction(): [{ toFixed(): string }, { toFixed(): string }] } };
    const [num, den] = node.value.toFraction();
    expect([num.toFixed(), den.toFixed()]).toEqual(["1999999999999999999", "2"]);
  });

  it("leave units out: an unbound name is an undefined symbol, not a unit", () => {
    expect(outcome(floatMath(), "5 cm")).toBe("error: Undefined symbol cm");
    expect(checkEquivalence("5 cm", "5").equal).toBe(true); // units are dropped before mathjs
  });

  it("do not evaluate the operators nobody asked for: bitwise, transpose, element-wise", () => {
    // A full instance reads `5 & 3` as 1 and `5'` as 5; here they fail, and the checker compares text.
    for (const [candidate, fullValue] of [["5 & 3", "1"], ["1 | 2", "3"], ["~5", "-6"], ["1 << 2", "4"], ["5'", "5"], ["2 .* 3", "6"]] as const) {
      expect(outcome(full, candidate)).toBe(`${fullValue} : number`);
      expect(outcome(floatMath(), candidate), candidate).toMatch(/^error: /);
      expect(checkEquivalence(candidate, fullValue), candidate).toEqual({ equal: false, method: "text" });
    }
  });
});

describe("where mathjs's factories come from", () => {
  /** The factories (`createAdd`, …) a name's dependency map brings in, nested maps walked. */
  const factoryNames = (map: FactoryFunctionMap): string[] => {
    const names = new Set<string>();
    const walk = (m: FactoryFunctionMap): void => {
      for (const [key, value] of Object.entries(m)) {
        if (typeof value === "object" && value !== null) walk(value as FactoryFunctionMap);
        else names.add(key);
      }
    };
    walk(map);
    return [...names].sort();
  };
  const byName = (source: MathjsFactories) => Object.fromEntries(MATH_NAMES.map((name) => [name, factoryNames(source.dependencies[name])]));

  it("on Node, from mathjs's files (not its entry), the same factories as the Worker's static imports", () => {
    const fromFiles = mathjsFromFiles(createRequire(import.meta.url)); // throws if mathjs moved them
    expect(byName(fromFiles)).toEqual(byName(BUNDLED_MATHJS));
    expect(byName(loadMathjsOnNode())).toEqual(byName(BUNDLED_MATHJS));
    expect(typeof fromFiles.create).toBe("function");
  });
});
