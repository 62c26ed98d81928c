/**
 * The shape of an answer: one value, an ordered tuple or interval, an unordered set or
 * list of solutions, or a union of intervals. Elements are left as text for the scalar
 * comparison.
 */
export type AnswerShape =
  | { kind: "scalar"; text: string }
  | { kind: "set"; items: string[] }
  | { kind: "list"; items: string[] }
  | { kind: "bracketed"; open: "(" | "["; close: ")" | "]"; items: string[] }
  | { kind: "union"; parts: AnswerShape[] }
  | { kind: "matrix"; rows: string[][] };

/** Delimiters normalizeAnswerText writes a matrix with: `⟦a,b;c,d⟧` (rows by `;`, cells by `,`). */
export const MATRIX_OPEN = "\u27e6";
export const MATRIX_CLOSE = "\u27e7";

const OPENERS = "([{\u27e6";
const CLOSERS = ")]}\u27e7";

/** Splits on `separator` where no bracket is open (intervals' mixed brackets count too). */
export function splitTopLevel(text: string, separator: string | RegExp): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  // Sticky: matches at lastIndex only, one regex for the whole scan (linear in the text).
  const sticky = typeof separator === "string" ? null : new RegExp(separator.source, "y");
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (OPENERS.includes(ch)) depth++;
    else if (CLOSERS.includes(ch)) depth = Math.max(0, depth - 1);
    else if (depth === 0) {
      let match: string | null;
      if (sticky) {
        sticky.lastIndex = i;
        match = sticky.exec(text)?.[0] ?? null;
      } else match = text.startsWith(separator as string, i) ? (separator as string) : null;
      if (match) {
        parts.push(text.slice(start, i));
        start = i + match.length;
        i = start - 1;
      }
    }
  }
  parts.push(text.slice(start));
  return parts.map((p) => p.trim());
}

/** Index of the bracket closing the one at 0, or -1. */
function matchingClose(text: string): number {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (OPENERS.includes(ch)) depth++;
    else if (CLOSERS.includes(ch)) {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}

const THOUSANDS = /^-?\d{1,3}(,\d{3})+(\.\d+)?$/;

/** Expands one top-level `\pm`: `1 \pm 2` → `1 + (2)`, `1 - (2)`. */
function expandPlusMinus(text: string): string[] | null {
  const parts = splitTopLevel(text, /\\pm(?![a-zA-Z])|±/);
  if (parts.length !== 2) return null;
  const [a, b] = parts as [string, string];
  return a === "" ? [`${b}`, `-(${b})`] : [`${a} + (${b})`, `${a} - (${b})`];
}

export function answerShape(text: string): AnswerShape {
  let t = text.trim();
  // A matrix in brackets, `(\begin{pmatrix}…\end{pmatrix})`, is the matrix.
  while (/^[([]\s*\u27e6/.test(t) && /\u27e7\s*[)\]]$/.test(t) && matchingClose(t) === t.length - 1) t = t.slice(1, -1).trim();
  if (t.startsWith(MATRIX_OPEN) && matchingClose(t) === t.length - 1) {
    return { kind: "matrix", rows: splitTopLevel(t.slice(1, -1), ";").map((row) => splitTopLevel(row, ",")) };
  }
  const union = splitTopLevel(t, /\\cup(?![a-zA-Z])|\s+U\s+/);
  if (union.length > 1) return { kind: "union", parts: union.map(answerShape) };

  const first = t[0];
  const last = t[t.length - 1];
  if (first === "{" && last === "}" && matchingClose(t) === t.length - 1) {
    const inner = t.slice(1, -1).trim();
    return { kind: "set", items: inner === "" ? [] : splitTopLevel(inner, ",") };
  }
  if ((first === "(" || first === "[") && (last === ")" || last === "]") && matchingClose(t) === t.length - 1) {
    // `(0;-2;6)` is written with semicolons where the decimal comma is in use.
    let items = splitTopLevel(t.slice(1, -1), ",");
    if (items.length === 1) items = splitTopLevel(t.slice(1, -1), ";");
    if (items.length >= 2) return { kind: "bracketed", open: first, close: last, items };
  }
  if (!THOUSANDS.test(t)) {
    const items = splitTopLevel(t, /,|;|\s+or\s+|\s+and\s+|(?<=[)\]])\s*(?:or|and)\s*(?=[([])/).filter((s) => s !== "");
    if (items.length > 1) return { kind: "list", items: items.flatMap((s) => expandPlusMinus(s) ?? [s]) };
  }
  const pm = expandPlusMinus(t);
  if (pm) return { kind: "list", items: pm };
  return { kind: "scalar", text: t };
}
