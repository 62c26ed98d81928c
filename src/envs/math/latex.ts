/**
 * LaTeX and typographic math to a plain expression mathjs can parse:
 * `\dfrac{\sqrt{3}}{2}` → `((sqrt(3))/(2))`, `2 \times 10^{3}` → `2 * 10^(3)`.
 * Only the notation answers are written in; anything unknown is left for the parser
 * to reject.
 */

/** The content of a `{…}` group starting at `open` (which must be `{`), and the index after it. */
export function readGroup(text: string, open: number): { content: string; end: number } | null {
  if (text[open] !== "{") return null;
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const ch = text[i];
    if (ch === "\\") {
      i++; // an escaped character (\{ or \}) never opens or closes a group
      continue;
    }
    if (ch === "{") depth++;
    else if (ch === "}") {
      depth--;
      if (depth === 0) return { content: text.slice(open + 1, i), end: i + 1 };
    }
  }
  return null;
}

/** One argument of a macro: a `{group}`, or a single character (`\frac12`). */
function readArgument(text: string, at: number): { content: string; end: number } | null {
  let i = at;
  while (text[i] === " ") i++;
  if (i >= text.length) return null;
  if (text[i] === "{") return readGroup(text, i);
  if (text[i] === "\\") {
    const m = /^\\[a-zA-Z]+/.exec(text.slice(i));
    if (m) return { content: m[0], end: i + m[0].length };
  }
  return { content: text[i] as string, end: i + 1 };
}

/** The content of the last `\boxed{…}` (or `\fbox{…}`), or null when there is none. */
export function lastBoxed(text: string): string | null {
  const at = Math.max(text.lastIndexOf("\\boxed"), text.lastIndexOf("\\fbox"));
  if (at < 0) return null;
  const brace = text.indexOf("{", at);
  if (brace < 0) return null;
  const between = text.slice(at, brace).replace(/^\\(boxed|fbox)/, "");
  if (between.trim() !== "") {
    // `\boxed 5` form: the argument runs to the next space or `$`.
    const m = /^\\boxed\s+([^\s$]+)/.exec(text.slice(at));
    return m ? (m[1] as string) : null;
  }
  return readGroup(text, brace)?.content ?? null;
}

/** Replaces every `\name{a}{b}` (arity given) using `render`, innermost arguments first. */
function replaceMacro(text: string, name: string, arity: number, render: (args: string[], optional: string | null) => string): string {
  const pattern = new RegExp(`\\\\${name}(?![a-zA-Z])`);
  let guard = 0;
  for (let m = pattern.exec(text); m && guard < 1000; m = pattern.exec(text), guard++) {
    let at = m.index + m[0].length;
    let optional: string | null = null;
    while (text[at] === " ") at++;
    if (text[at] === "[") {
      const close = text.indexOf("]", at);
      if (close < 0) break;
      optional = text.slice(at + 1, close);
      at = close + 1;
    }
    const args: string[] = [];
    for (let k = 0; k < arity; k++) {
      const arg = readArgument(text, at);
      if (!arg) break;
      args.push(latexToPlain(arg.content));
      at = arg.end;
    }
    if (args.length < arity) break;
    text = text.slice(0, m.index) + render(args, optional === null ? null : latexToPlain(optional)) + text.slice(at);
  }
  return text;
}

const SIMPLE_MACROS: [RegExp, string][] = [
  [/\\(?:cdot|times|ast)(?![a-zA-Z])/g, "*"],
  [/\\div(?![a-zA-Z])/g, "/"],
  [/\\pi(?![a-zA-Z])/g, " pi "],
  [/\\infty(?![a-zA-Z])/g, " Infinity "],
  [/\\ln(?![a-zA-Z])/g, " log"],
  [/\\log(?![a-zA-Z])/g, " log10"],
  [/\\(sin|cos|tan|exp|sec|csc|cot|arcsin|arccos|arctan|sinh|cosh|tanh)(?![a-zA-Z])/g, " $1"],
  [/\\(?:left|right|big|Big|bigg|Bigg)(?![a-zA-Z])/g, ""],
  [/\\(?:displaystyle|textstyle)(?![a-zA-Z])|\\q?quad/g, " "],
  [/\\[,;:! ]/g, " "],
  [/\\\{/g, "{"],
  [/\\\}/g, "}"],
];

const TRIG = "sin|cos|tan|sec|csc|cot|arcsin|arccos|arctan|sinh|cosh|tanh|ln|exp";

/**
 * Notation that only spells a number or a name differently: dropped or rewritten to the
 * plain LaTeX the rest of latexToPlain reads. Each pattern is one pass over the text.
 */
const SPELLINGS: [RegExp, string][] = [
  // `\\le` from a doubly escaped source is `\le`; a matrix keeps its `\\` row breaks.
  [/\\\\(?=[a-zA-Z])/g, "\\"],
  [/\\[dtc]frac(?![a-zA-Z])/g, "\\frac"],
  [/\\textnormal(?![a-zA-Z])/g, "\\text"],
  // Digit-group separators: 14{,}916, 11,\!111, 5\,000.
  [/(\d)\s*\{\s*,\s*\}\s*(?=\d{3})/g, "$1,"],
  [/(\d),\\!\s*(?=\d{3})/g, "$1,"],
  [/\\\$/g, " "],
  [/(\d)\\[,;!: ](?=\d{3}(?!\d))/g, "$1"],
  [/\\(?:emptyset|varnothing)(?![a-zA-Z])/g, "\\{\\}"],
  [/\\mathbb\s*\{?\s*R\s*\}?/g, "(-\\infty,\\infty)"],
  [/\\(?:geq|geqslant|ge)(?![a-zA-Z])|≥/g, ">="],
  [/\\(?:leq|leqslant|le)(?![a-zA-Z])|≤/g, "<="],
  [/\\(?:neq|ne)(?![a-zA-Z])|≠/g, "!="],
  [/\\lt(?![a-zA-Z])/g, "<"],
  [/\\gt(?![a-zA-Z])/g, ">"],
  [/\\lfloor(?![a-zA-Z])/g, " floor("],
  [/\\rfloor(?![a-zA-Z])/g, ")"],
  [/\\lceil(?![a-zA-Z])/g, " ceil("],
  [/\\rceil(?![a-zA-Z])/g, ")"],
];

/**
 * `\sin^2(x)` → `(sin(x))^2`, `\sin^{2} x` → `(sin(x))^2`, `\sin x` → `sin(x)`: a power
 * written on a function name applies to its value, and a bare argument (one letter or
 * number) is bracketed so mathjs reads a call. The argument in brackets has no nested
 * brackets, so one scan of the text decides.
 */
function functionPowers(text: string): string {
  const withPower = new RegExp(`\\\\(${TRIG})\\s*\\^\\s*(?:\\{\\s*(-?\\d+)\\s*\\}|(\\d))\\s*(\\([^()]*\\)|\\{[^{}]*\\}|[a-zA-Z0-9](?![a-zA-Z]))`, "g");
  text = text.replace(withPower, (_m, fn: string, braced: string | undefined, digit: string | undefined, arg: string) => {
    const inner = arg.startsWith("(") || arg.startsWith("{") ? arg.slice(1, -1) : arg;
    return `(\\${fn}(${inner}))^(${braced ?? digit})`;
  });
  const bare = new RegExp(`\\\\(${TRIG})\\s+([a-zA-Z0-9](?![a-zA-Z0-9(]))`, "g");
  return text.replace(bare, "\\$1($2)");
}

/** `\log_2 8` → `log(8, 2)`, `\log_{b}(x)` → `log(x, b)`: a logarithm with its base. */
function logBases(text: string): string {
  return text.replace(/\\log\s*_\s*(?:\{([^{}]*)\}|(\w))\s*(\([^()]*\)|\{[^{}]*\}|\d+(?:\.\d+)?|[a-zA-Z])/g, (_m, braced: string | undefined, single: string | undefined, arg: string) => {
    const inner = arg.startsWith("(") || arg.startsWith("{") ? arg.slice(1, -1) : arg;
    return ` log(${inner}, ${braced ?? single})`;
  });
}

/**
 * A braced subscript as part of one identifier: `F_{k}` → `F_k`, `x_{12}` → `x_12`, and
 * anything else by its character codes, `F_{n-k-1}` → `F__110_45_107_45_49`. The code form
 * starts with `__` and has no letters, so it never collides with a written name and
 * `fixIdentifiers` keeps it whole; the same subscript is the same variable on both sides.
 */
function subscripts(text: string): string {
  let out = "";
  let from = 0;
  for (let at = text.indexOf("_{"), k = 0; at >= 0 && k < 1000; at = text.indexOf("_{", from), k++) {
    const group = readGroup(text, at + 1);
    if (!group) break;
    const content = group.content.replace(/\s+/g, "");
    const name = /^(?:[a-zA-Z0-9]|\d+)$/.test(content) ? `_${content}` : `__${[...content].map((c) => c.codePointAt(0)).join("_")}`;
    out += text.slice(from, at) + name;
    from = group.end;
  }
  return out + text.slice(from);
}

/** The end of a sum's or product's body: the next `+` `-` `=` `,` relation or closing bracket at its own depth. */
function termEnd(text: string, from: number): number {
  let depth = 0;
  for (let i = from; i < text.length; i++) {
    const ch = text[i] as string;
    if (ch === "(" || ch === "[" || ch === "{") depth++;
    else if (ch === ")" || ch === "]" || ch === "}") {
      if (--depth < 0) return i;
    } else if (depth === 0 && /[+=,;<>!]/.test(ch)) return i;
    else if (depth === 0 && ch === "-" && text.slice(from, i).trim() !== "") return i;
  }
  return text.length;
}

/**
 * `\sum_{k=a}^{b} body` → `sumOf((body), k, (a), (b))` (and `\prod` → `prodOf`). These are
 * not evaluated: at a sample point a sum is a fixed transcendental function of its body's
 * value, its index's value and its bounds (scalar.ts), so two sums are equal when their
 * bodies are equal as expressions, over the same index and bounds; `\sum_{k} F_k F_j` =
 * `\sum_{k} F_j F_k`. A sum never equals a closed form that way (a miss, never a false
 * positive). The body is the product term after the bounds, as written.
 */
function sums(text: string): string {
  const pattern = /\\(sum|prod)(?:\\limits)?\s*_\s*\{\s*([a-zA-Z])\s*=([^{}]*)\}\s*\^\s*(\{[^{}]*\}|\([^()]*\)|[a-zA-Z0-9]|Infinity)/;
  for (let k = 0; k < 32; k++) {
    const m = pattern.exec(text);
    if (!m) break;
    const start = m.index + m[0].length;
    const end = termEnd(text, start);
    const body = text.slice(start, end).trim();
    if (body === "") break;
    const upper = (m[4] as string).replace(/^[{(]|[})]$/g, "");
    text = `${text.slice(0, m.index)} ${m[1]}Of((${body}), ${m[2]}, (${(m[3] as string).trim()}), (${upper})) ${text.slice(end)}`;
  }
  return text;
}

/**
 * `0.\overline{3}` → `((1)/(3))`, `0.1\overline{6}` → `((15)/(90))`: a repeating decimal as the
 * exact fraction it is (`\bar` alike). The repeating block is digits only, so `\overline{AB}`
 * (a segment) is left alone.
 */
function repeatingDecimals(text: string): string {
  return text.replace(/(\d*)\.(\d*)\s*\\(?:overline|bar)\s*(?:\{\s*(\d+)\s*\}|(\d))/g, (_m, whole: string, fixed: string, braced: string | undefined, single: string | undefined) => {
    const block = braced ?? single ?? "";
    // whole.fixed(block)(block)… = (whole fixed block − whole fixed) / (10^|fixed| · (10^|block| − 1))
    const numerator = BigInt(`${whole}${fixed}${block}`) - BigInt(`${whole}${fixed}` || "0");
    const denominator = 10n ** BigInt(fixed.length) * (10n ** BigInt(block.length) - 1n);
    return `((${numerator})/(${denominator}))`;
  });
}

/** Converts LaTeX math to a plain expression (sets' braces are kept as `{` `}`). */
export function latexToPlain(input: string): string {
  let text = repeatingDecimals(input);
  for (const [pattern, replacement] of SPELLINGS) text = text.replace(pattern, replacement);
  text = functionPowers(logBases(text));
  // A whole number directly before a numeric fraction is a mixed number, one value:
  // -3\frac{1}{2} = -(3 + 1/2), 2 \times 3\frac{1}{2} = 2 × (3 + 1/2). Not after a power,
  // a subscript or another number's digits (x^2\frac{1}{2} is a product).
  text = text.replace(/(?<![\w.^_}])(\d+)\s*\\frac\s*\{(\d+)\}\s*\{(\d+)\}/g, "($1 + \\frac{$2}{$3})");
  text = replaceMacro(text, "frac", 2, ([a, b]) => `((${a})/(${b}))`);
  text = replaceMacro(text, "binom", 2, ([a, b]) => ` combinations(${a}, ${b})`);
  text = replaceMacro(text, "sqrt", 1, ([a], n) => (n ? ` nthRoot(${a}, ${n})` : ` sqrt(${a})`));
  text = replaceMacro(text, "(?:text|textbf|textit|mathrm|mathbf|mbox|operatorname)", 1, ([a]) => ` ${a} `);
  for (const [pattern, replacement] of SIMPLE_MACROS) text = text.replace(pattern, replacement);
  // Exponents and subscripts in braces: x^{2} → x^(2); subscripts are dropped (x_1 → x1 is not wanted either).
  text = text.replace(/\^\s*\{/g, "^{");
  let at = text.indexOf("^{");
  while (at >= 0) {
    const group = readGroup(text, at + 1);
    if (!group) break;
    text = `${text.slice(0, at)}^(${group.content})${text.slice(group.end)}`;
    at = text.indexOf("^{");
  }
  return subscripts(sums(text));
}

/** Unicode math signs to ASCII. */
export function asciiMath(text: string): string {
  return text
    .replace(/[\u2212\u2013\u2014]/g, "-")
    .replace(/[\u00d7\u22c5\u00b7]/g, "*")
    .replace(/\u00f7/g, "/")
    .replace(/\u221a/g, "sqrt")
    .replace(/\u03c0/g, "pi")
    .replace(/\u221e/g, "Infinity")
    .replace(/\u222a/g, "\\cup")
    .replace(/[\u00b2]/g, "^2")
    .replace(/[\u00b3]/g, "^3")
    .replace(/\u00a0/g, " ")
    // Python's power, `x**2`, between two operands (markdown's `**bold**` has none on one side).
    .replace(/(?<=[\w)\]}.])\s*\*\*\s*(?=[-\w({.])/g, "^");
}
