import { all, create, type MathJsInstance } from "mathjs";

/**
 * mathjs instances, built on first use (creating one costs a few milliseconds, which a
 * Worker should not pay at start-up for environments it may never run).
 *
 * - `floatMath`: plain IEEE doubles, for evaluating expressions at sample points.
 * - `decimalMath`: BigNumber mode, so a literal like 0.1 or 1.5e3 parses to an exact
 *   decimal that `Rational` can take over without rounding.
 */
// mathjs types `all` as possibly undefined; it is always defined in the package.
const factories = all as NonNullable<typeof all>;

let floatInstance: MathJsInstance | undefined;
let decimalInstance: MathJsInstance | undefined;

export function floatMath(): MathJsInstance {
  floatInstance ??= create(factories);
  return floatInstance;
}

export function decimalMath(): MathJsInstance {
  decimalInstance ??= create(factories, { number: "BigNumber", precision: 64 });
  return decimalInstance;
}
