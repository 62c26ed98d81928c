import type { MathNode } from "mathjs";
import { floatMath } from "../../math/mathjs.js";

/**
 * A calculator the model may call. Expressions are parsed by mathjs and every node is
 * checked against a whitelist before evaluation: numbers, + − × ÷ ^ mod !, parentheses,
 * a fixed set of functions and constants. No assignments, no function definitions, no
 * matrices, strings or units, and no access to mathjs's own `import`/`evaluate`, so a
 * model cannot reach anything but arithmetic. Nothing is run through JavaScript eval.
 */
export const CALCULATOR_FUNCTIONS = [
  "sqrt", "cbrt", "nthRoot", "abs", "exp", "log", "log10", "log2", "sin", "cos", "tan", "asin", "acos", "atan", "atan2",
  "floor", "ceil", "round", "fix", "min", "max", "mod", "gcd", "lcm", "sign", "hypot", "pow", "factorial",
] as const;
export const CALCULATOR_CONSTANTS = ["pi", "e", "tau", "phi"] as const;
/** mathjs's names for the operators allowed: + - * / unary -, unary +, ^, mod (or %), !. */
export const CALCULATOR_OPERATORS = ["add", "subtract", "multiply", "divide", "unaryMinus", "unaryPlus", "pow", "mod", "factorial"] as const;
const FUNCTIONS = new Set<string>(CALCULATOR_FUNCTIONS);
const CONSTANTS = new Set<string>(CALCULATOR_CONSTANTS);
const OPERATORS = new Set<string>(CALCULATOR_OPERATORS);
export const MAX_EXPRESSION_LENGTH = 500;

export class CalculatorError extends Error {
  override name = "CalculatorError";
}

function check(node: MathNode): void {
  node.traverse((n, path, parent) => {
    const any = n as unknown as { type: string; value?: unknown; name?: string; fn?: unknown; op?: string };
    switch (any.type) {
      case "ConstantNode":
        if (typeof any.value !== "number") throw new CalculatorError("only numbers are allowed as constants");
        return;
      case "ParenthesisNode":
        return;
      case "OperatorNode":
        if (!OPERATORS.has(String(any.fn))) throw new CalculatorError(`operator "${any.op}" is not supported`);
        return;
      case "FunctionNode": {
        const fn = any.fn as { type?: string; name?: string };
        if (fn.type !== "SymbolNode" || !FUNCTIONS.has(String(fn.name))) throw new CalculatorError(`function "${fn.name ?? "?"}" is not available`);
        return;
      }
      case "SymbolNode":
        if (parent?.type === "FunctionNode" && path === "fn") return;
        if (!CONSTANTS.has(String(any.name))) throw new CalculatorError(`unknown name "${any.name}" (constants: ${[...CONSTANTS].join(", ")})`);
        return;
      default:
        throw new CalculatorError(`${any.type.replace(/Node$/, "").replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase()} expressions are not supported`);
    }
  });
}

/** Evaluates an arithmetic expression; the result is printed with up to 15 significant digits. */
export function calculate(expression: string): string {
  const text = expression.replace(/×/g, "*").replace(/÷/g, "/").replace(/−/g, "-").replace(/,(?=\d{3}\b)/g, "");
  if (text.trim() === "") throw new CalculatorError("empty expression");
  if (text.length > MAX_EXPRESSION_LENGTH) throw new CalculatorError(`expression longer than ${MAX_EXPRESSION_LENGTH} characters`);
  const math = floatMath();
  let node: MathNode;
  try {
    node = math.parse(text);
  } catch (err) {
    throw new CalculatorError(`cannot parse: ${err instanceof Error ? err.message : String(err)}`);
  }
  check(node);
  let value: unknown;
  try {
    value = node.compile().evaluate({});
  } catch (err) {
    throw new CalculatorError(err instanceof Error ? err.message : String(err));
  }
  if (typeof value !== "number") throw new CalculatorError("the result is not a real number");
  if (!Number.isFinite(value)) throw new CalculatorError(Number.isNaN(value) ? "the result is undefined (NaN)" : "the result is infinite");
  return math.format(value, { precision: 15, lowerExp: -9, upperExp: 21 });
}
