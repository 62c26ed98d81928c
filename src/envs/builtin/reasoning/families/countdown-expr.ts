import { Rational } from "../../../math/rational.js";

/**
 * A tiny parser for countdown answers: non-negative integers, + − × ÷ (ASCII or
 * typographic) and parentheses, evaluated exactly. No unary minus: every number must
 * come from the given list.
 */
export interface ParsedExpression {
  value: Rational;
  numbers: number[];
}

type Token = { kind: "num"; value: number } | { kind: "op"; value: "+" | "-" | "*" | "/" } | { kind: "(" } | { kind: ")" };

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  const src = text.replace(/[×x·]/g, "*").replace(/÷/g, "/").replace(/[−–]/g, "-").replace(/\\times/g, "*").replace(/\\div/g, "/").replace(/\\cdot/g, "*");
  for (let i = 0; i < src.length; ) {
    const ch = src[i] as string;
    if (/\s/.test(ch)) {
      i++;
    } else if (/\d/.test(ch)) {
      let j = i;
      while (j < src.length && /\d/.test(src[j] as string)) j++;
      tokens.push({ kind: "num", value: Number(src.slice(i, j)) });
      i = j;
    } else if (ch === "+" || ch === "-" || ch === "*" || ch === "/") {
      tokens.push({ kind: "op", value: ch });
      i++;
    } else if (ch === "(" || ch === "[") {
      tokens.push({ kind: "(" });
      i++;
    } else if (ch === ")" || ch === "]") {
      tokens.push({ kind: ")" });
      i++;
    } else throw new SyntaxError(`unexpected "${ch}"`);
  }
  return tokens;
}

/** Parses and evaluates; throws SyntaxError on malformed input and RangeError on division by zero. */
export function parseCountdownExpression(text: string): ParsedExpression {
  const tokens = tokenize(text);
  let pos = 0;
  const numbers: number[] = [];
  const peek = () => tokens[pos];
  const expr = (): Rational => {
    let left = term();
    for (let t = peek(); t?.kind === "op" && (t.value === "+" || t.value === "-"); t = peek()) {
      pos++;
      const right = term();
      left = t.value === "+" ? left.add(right) : left.sub(right);
    }
    return left;
  };
  const term = (): Rational => {
    let left = factor();
    for (let t = peek(); t?.kind === "op" && (t.value === "*" || t.value === "/"); t = peek()) {
      pos++;
      const right = factor();
      left = t.value === "*" ? left.mul(right) : left.div(right);
    }
    return left;
  };
  const factor = (): Rational => {
    const t = tokens[pos++];
    if (!t) throw new SyntaxError("expression ends too early");
    if (t.kind === "num") {
      numbers.push(t.value);
      return new Rational(BigInt(t.value));
    }
    if (t.kind === "(") {
      const v = expr();
      if (tokens[pos++]?.kind !== ")") throw new SyntaxError("missing )");
      return v;
    }
    throw new SyntaxError(`unexpected ${t.kind === "op" ? t.value : t.kind}`);
  };
  const value = expr();
  if (pos !== tokens.length) throw new SyntaxError("unexpected text after the expression");
  return { value, numbers };
}
