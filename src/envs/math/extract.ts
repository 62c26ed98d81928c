/**
 * Finding the final answer in a model's whole output, the way math-verify does (same
 * anchors, same order), without its regular expressions: every step below is a scan
 * of the text or a regular expression without nested quantifiers, so the work is
 * linear in the text, and the text is capped before any of it.
 *
 * Readings are tried in this order, and the first kind that finds anything decides:
 * 0. GSM8K's `#### 42`: what follows the last `####` (math-verify has no such anchor);
 * 1. `\boxed{…}` / `\fbox{…}`: the last one, together with the boxes just before it
 *    when they are close (under 10 characters apart) or separated by `,` `;` `and` `or`
 *    within 70 characters and differ from it (`\boxed{1}, \boxed{2}` reads `1,2`);
 * 2. "final answer is X" (X a math span or a number or expression); when it comes after
 *    the last box it wins over the box (math-verify ranks the two alike, rightmost first);
 * 3. "answer: X", then "answer … X" within 50 characters;
 * 4. any math span (`$…$`, `$$…$$`, `\(…\)`, `\[…\]`; inline spans stay on one line;
 *    spans joined by `,` `and` `or` read as one list), any bare `\frac{a}{b}`, and,
 *    when the `expr` target is on, any plain number or arithmetic expression, rightmost
 *    first.
 * A text with no math delimiter and no prose is itself the answer (`\frac{1}{2}`,
 * `x^2+1`, `(1,2]`), which is how references are usually written.
 */

export type ExtractionTarget = "latex" | "expr";

export interface AnswerReading {
  /** The answer's text, LaTeX or plain. */
  text: string;
  /** Where it was found. */
  how: "boxed" | "final-answer" | "answer" | "span" | "expr" | "whole";
}

/** Longest text the extractor reads (a whole worked solution fits; a runaway generation does not). */
export const MATH_TEXT_MAX_CHARS = 100_000;
/** Most readings handed on for parsing: the verifier keeps the first that reads as math. */
const MAX_READINGS = 8;
/** Most boxes or spans looked at: past these, earlier ones are never the final answer. */
const MAX_BOXES = 64;

interface Span {
  start: number;
  end: number;
  text: string;
}

/** The index just past the `}` closing the `{` at `open`, or -1. */
function closeBrace(text: string, open: number, limit = text.length): number {
  let depth = 0;
  for (let i = open; i < limit; i++) {
    const ch = text[i];
    if (ch === "\\") {
      i++;
      continue;
    }
    if (ch === "{") depth++;
    else if (ch === "}" && --depth === 0) return i + 1;
  }
  return -1;
}

const BOX_SEPARATOR = /\b(?:and|or)\b|[,;]/;

/** The last group of boxes, per the rule in the module comment, joined by commas; null when there is no box. */
export function lastBoxedGroup(text: string): string | null {
  const contents: string[] = [];
  let limit = text.length;
  let previousStart = -1;
  for (let k = 0; k < MAX_BOXES; k++) {
    const at = Math.max(text.lastIndexOf("\\boxed", limit - 1), text.lastIndexOf("\\fbox", limit - 1));
    if (at < 0) break;
    let brace = at + (text.startsWith("\\boxed", at) ? 6 : 5);
    while (brace < limit && /\s/.test(text[brace] as string)) brace++;
    if (text[brace] !== "{") {
      // `\boxed 5`: the argument runs to the next space or `$`.
      if (contents.length === 0) {
        const m = /^[^\s$]+/.exec(text.slice(brace, limit));
        if (m) contents.push(m[0]);
      }
      break;
    }
    const end = closeBrace(text, brace, limit);
    if (end < 0) {
      // An unclosed box is the last one: its content runs to the end.
      if (contents.length === 0) contents.push(text.slice(brace + 1, limit).trim());
      break;
    }
    const content = text.slice(brace + 1, end - 1).trim();
    if (previousStart >= 0) {
      const between = text.slice(end, previousStart);
      const near = between.length < 10;
      const listed = content !== contents[contents.length - 1] && between.length < 70 && BOX_SEPARATOR.test(between);
      if (!near && !listed) break;
    }
    if (contents[contents.length - 1] !== content) contents.push(content);
    previousStart = at;
    limit = at;
  }
  return contents.length === 0 ? null : contents.reverse().join(",");
}

/**
 * `text.indexOf(needle, from)` remembering its last answer per needle: when searches start
 * at increasing positions (as the span scan's do), a search from before the last hit
 * returns that hit without scanning again, and one past the last miss returns -1, so
 * `\( \( \( …` with no closing delimiter costs one scan of the text, not one per opening.
 */
function memoIndexOf(text: string): (needle: string, from: number) => number {
  const last = new Map<string, { from: number; at: number }>();
  return (needle, from) => {
    const memo = last.get(needle);
    if (memo && from >= memo.from && (memo.at < 0 || from <= memo.at)) return memo.at;
    const at = text.indexOf(needle, from);
    last.set(needle, { from, at });
    return at;
  };
}

/** Math spans in order of position. Inline `$…$` and `\(…\)` stay on one line, as in math-verify. */
export function mathSpans(text: string): Span[] {
  const find = memoIndexOf(text);
  const spans: Span[] = [];
  let i = 0;
  while (i < text.length && spans.length < MAX_BOXES * 4) {
    const ch = text[i];
    const escaped = i > 0 && text[i - 1] === "\\";
    let open = "";
    let close = "";
    let oneLine = false;
    if (ch === "$" && !escaped) {
      if (text[i + 1] === "$") {
        open = "$$";
        close = "$$";
      } else if (!/\d/.test(text[i - 1] ?? "")) {
        open = "$";
        close = "$";
        oneLine = true;
      }
    } else if (ch === "\\" && !escaped && (text[i + 1] === "[" || text[i + 1] === "(")) {
      open = text.slice(i, i + 2);
      close = open === "\\[" ? "\\]" : "\\)";
      oneLine = open === "\\(";
    }
    if (!open) {
      i++;
      continue;
    }
    // The closing delimiter, skipping escaped ones (`\$` inside `$…$` is a dollar sign).
    let j = i + open.length;
    let found = -1;
    while (j < text.length) {
      const k = find(close, j);
      if (k < 0) break;
      const newline = oneLine ? find("\n", j) : -1;
      if (oneLine && newline >= 0 && newline < k) break;
      if (close === "$" || close === "$$" ? text[k - 1] === "\\" : false) {
        j = k + 1;
        continue;
      }
      found = k;
      break;
    }
    if (found < 0) {
      i += open.length;
      continue;
    }
    const inner = text.slice(i + open.length, found);
    if (inner.trim() !== "") spans.push({ start: i, end: found + close.length, text: inner.trim() });
    i = found + close.length;
  }
  return spans;
}

/** A percent sign or word right after a span belongs to its value (`$28$\%`). */
function withPercent(text: string, span: Span): Span {
  const m = /^\s*(?:\\?%|percent\b|pct\b)/i.exec(text.slice(span.end, span.end + 12));
  return m ? { start: span.start, end: span.end + m[0].length, text: `${span.text}%` } : span;
}

/** Spans written one after another as a list (`$1$, $2$ and $3$`) become one reading. */
function chainSpans(text: string, spans: Span[]): Span[] {
  const out: Span[] = [];
  for (const span of spans) {
    const last = out[out.length - 1];
    if (last && out.length > 0) {
      const between = text.slice(last.end, span.start);
      if (/^\s*(?:,?\s*and|,?\s*or|,)\s*$/.test(between) && last.text.split(",").length < 6) {
        out[out.length - 1] = { start: last.start, end: span.end, text: `${last.text},${span.text}` };
        continue;
      }
    }
    out.push(span);
  }
  return out;
}

/** Plain numbers (thousands groups, decimal commas, percent) and arithmetic on them. */
const NUMBER = /(?<=^|[\s=*])(?:\\?[$€£¥₹])?(-?(?:[1-9]\d{0,2}(?:,\d{3})+(?:\.\d+)?|[1-9]\d{0,2}(?: \d{3})+(?![\d.,])|\d+(?:[.,]\d+)?|\.\d+))(\s*(?:%|percent\b|percentage\b|pct\b))?/gi;
const EXPRESSION = /(?<![\w.])-?\(?-?\d+(?:\.\d+)?\)?(?:[ \t]*[-+*/×÷^][ \t]*-?\(?-?\d+(?:\.\d+)?\)?)+/g;

/** A plain number as the math-verify expr target reads it: `1,000.5` → 1000.5, `2,74` → 2.74, `0,111` → 0.111. */
export function plainNumber(raw: string): string {
  if (/^-?\d{1,3}(?:[, ]\d{3})+(?:\.\d+)?$/.test(raw) && !/^-?0,/.test(raw)) return raw.replace(/[, ]/g, "");
  return raw.replace(",", ".");
}

function exprSpans(text: string): Span[] {
  const found: Span[] = [];
  for (const m of text.matchAll(EXPRESSION)) {
    if (found.length >= MAX_BOXES * 4) break;
    found.push({ start: m.index, end: m.index + m[0].length, text: m[0].trim() });
  }
  for (const m of text.matchAll(NUMBER)) {
    if (found.length >= MAX_BOXES * 8) break;
    const number = plainNumber(m[1] as string);
    found.push({ start: m.index, end: m.index + m[0].length, text: m[2] ? `${number}%` : number });
  }
  return found;
}

function fractionSpans(text: string): Span[] {
  const out: Span[] = [];
  for (const m of text.matchAll(/-?\\frac\{-?\d+(?:[.,]\d+)?\}\{-?\d+(?:[.,]\d+)?\}/g)) {
    out.push({ start: m.index, end: m.index + m[0].length, text: m[0] });
    if (out.length >= MAX_BOXES) break;
  }
  return out;
}

const rightmostFirst = (a: Span, b: Span): number => b.end - a.end || a.start - b.start;

/** The first math span or (with `expr`) number at the start of `rest`, for the anchored readings. */
function leadingValue(rest: string, spans: Span[], offset: number, targets: readonly ExtractionTarget[]): string | null {
  const span = spans.find((s) => s.start >= offset && s.start - offset <= 3 + (rest.length - rest.trimStart().length));
  if (span && targets.includes("latex")) return span.text;
  if (targets.includes("expr")) {
    const m = /^\s*:?\s*(?:[$€£¥₹]\s?)?(-?[\d.,]+(?:\s*[-+*/^]\s*-?[\d.]+)*)(\s*%)?/.exec(rest);
    if (m && /\d/.test(m[1] as string)) {
      const value = (m[1] as string).replace(/[.,]$/, "");
      return (/^-?[\d.,]+$/.test(value) ? plainNumber(value) : value) + (m[2] ? "%" : "");
    }
  }
  return null;
}

/** Letters words of three or more that are no LaTeX command: the text is prose. */
function hasProse(text: string): boolean {
  const words = text.replace(/\\(?:begin|end)\{[a-zA-Z*]*\}|\\[a-zA-Z]+/g, " ").match(/[a-zA-Z]{3,}/g) ?? [];
  const known = /^(?:sqrt|frac|pi|sin|cos|tan|sec|csc|cot|log|exp|and|or|infty|inf|cup|cap|arcsin|arccos|arctan|sinh|cosh|tanh|floor|ceil)$/i;
  return words.some((w) => !known.test(w));
}

/** Longest answer read from the lines after "Answer:" (answerBlock). */
const MAX_BLOCK_CHARS = 300;

/**
 * "Answer:" (or "**Answer**", "Answer" alone on its line) with the answer on the lines after
 * it: those lines up to the first blank one, joined, when they are math without delimiters
 * or prose (`Answer:\n\sqrt{2}`, `Answer:\nx^2\n+ 2x\n+ 1`); null otherwise, and when the
 * answer starts on the same line (then the span and number readings decide, as before).
 */
function answerBlock(text: string, after: number): string | null {
  const head = /^[ \t]*(?:\*\*)?[ \t]*:?[ \t]*(?:\*\*)?[ \t]*\n\s*/.exec(text.slice(after, after + 40));
  if (!head) return null;
  const start = after + head[0].length;
  const blank = text.slice(start).search(/\n[ \t]*\n/);
  const block = (blank < 0 ? text.slice(start) : text.slice(start, start + blank)).trim();
  if (block === "" || block.length > MAX_BLOCK_CHARS || /\$|\\\(|\\\[/.test(block) || hasProse(block) || !/[\d\\]/.test(block)) return null;
  return block.replace(/\s+/g, " ");
}

/**
 * The readings of `text` in the order the verifier tries them (see the module comment).
 * Returns at most a few; the verifier keeps the first that reads as math.
 */
export function answerReadings(text: string, targets: readonly ExtractionTarget[] = ["latex", "expr"]): AnswerReading[] {
  const trimmed = text.trim();
  if (trimmed === "") return [];
  const latex = targets.includes("latex");
  // GSM8K's reference solutions end in `#### 42`: what follows the last marker is the answer.
  const hashes = trimmed.lastIndexOf("####");
  if (hashes >= 0) {
    const tail = (trimmed.slice(hashes + 4).split("\n")[0] as string).trim();
    if (tail !== "") return [{ text: /^-?\d{1,3}(?:,\d{3})+(?:\.\d+)?$/.test(tail) ? plainNumber(tail) : tail, how: "final-answer" }];
  }
  const boxed = latex ? lastBoxedGroup(trimmed) : null;
  const hasDelimiters = /\$|\\\(|\\\[/.test(trimmed);
  // A bare number with a decimal comma (`1000,99`, `0,111`; not `1,000`) is a decimal, as math-verify's expr target reads it.
  // With the latex target on too, `1,2` is a list, so only a comma no list is written with counts:
  // a whole part of 4+ digits or 0, or 4+ digits after it.
  const decimalComma = latex ? /^-?(?:(?:\d{4,}|0),\d+|\d+,\d{4,})$/ : /^-?(?:\d+,(?:\d{1,2}|\d{4,})|0,\d+)$/;
  if (boxed === null && targets.includes("expr") && decimalComma.test(trimmed)) return [{ text: plainNumber(trimmed), how: "expr" }];
  if (boxed === null && latex && !hasDelimiters && !hasProse(trimmed)) return [{ text: trimmed, how: "whole" }];
  // `W(x)=1orW(x)=-1`: relations with the spaces around `or`/`and` lost read as that list.
  const unglued = trimmed.replace(/(?<=[\d)\]}])(or|and)(?=[a-zA-Z]\w*\s*[(=])/g, " $1 ");
  if (boxed === null && latex && !hasDelimiters && unglued !== trimmed && !hasProse(unglued)) return [{ text: unglued, how: "whole" }];

  const spans = latex ? chainSpans(trimmed, mathSpans(trimmed).map((s) => withPercent(trimmed, s))) : [];
  const lower = trimmed.toLowerCase();
  // "final answer is X": the last such phrase decides; a box after it wins over it.
  const lastBox = Math.max(trimmed.lastIndexOf("\\boxed"), trimmed.lastIndexOf("\\fbox"));
  for (let at = lower.lastIndexOf("final answer"), k = 0; at >= 0 && k < 8; at = lower.lastIndexOf("final answer", at - 1), k++) {
    if (boxed !== null && at < lastBox) break;
    const window = lower.slice(at + 12, at + 12 + 110);
    const is = /\sis\b/.exec(window);
    if (!is) continue;
    const offset = at + 12 + is.index + is[0].length;
    const value = leadingValue(trimmed.slice(offset), spans, offset, targets);
    if (value !== null) return [{ text: value, how: "final-answer" }];
  }
  if (boxed !== null) return [{ text: boxed, how: "boxed" }];
  for (const colon of [true, false]) {
    for (let at = lower.lastIndexOf("answer"), k = 0; at >= 0 && k < 8; at = lower.lastIndexOf("answer", at - 1), k++) {
      const after = at + 6;
      if (colon && trimmed[after] !== ":") continue;
      if (latex) {
        const block = answerBlock(trimmed, after);
        if (block !== null) return [{ text: block, how: "answer" }];
      }
      const span = spans.find((s) => s.start >= after && s.start - after <= 50);
      if (span) return [{ text: span.text, how: "answer" }];
      // With `expr`: the first plain number, or arithmetic on numbers (`1/2`), within 50
      // characters that no `=` follows ("The answer is 5, not 6" is 5), outside any math span.
      if (targets.includes("expr")) {
        const window = trimmed.slice(after, after + 60);
        const expressions = [...window.matchAll(EXPRESSION)];
        for (const m of window.matchAll(NUMBER)) {
          if (m.index > 50) break;
          const start = after + m.index;
          if (spans.some((x) => start >= x.start && start < x.end)) continue;
          const number = m[1] as string;
          const numberStart = m.index + m[0].indexOf(number);
          const whole = expressions.find((e) => e.index <= numberStart && e.index + e[0].length > numberStart + number.length);
          const end = whole ? whole.index + whole[0].length : m.index + m[0].length;
          if (/^\s*=/.test(window.slice(end))) continue;
          if (whole) return [{ text: whole[0].trim(), how: "answer" }];
          return [{ text: m[2] ? `${plainNumber(m[1] as string)}%` : plainNumber(m[1] as string), how: "answer" }];
        }
      }
    }
  }

  // A number inside a math span is part of that span's answer, never an answer of its own.
  const outside = (x: Span): boolean => !spans.some((s) => x.start >= s.start && x.end <= s.end);
  const found: Span[] = [...spans];
  if (latex) found.push(...fractionSpans(trimmed).filter(outside));
  if (targets.includes("expr")) found.push(...exprSpans(trimmed).filter(outside));
  found.sort(rightmostFirst);
  const readings: AnswerReading[] = [];
  for (const span of found) {
    if (readings.length >= MAX_READINGS) break;
    if (readings.some((r) => r.text === span.text)) continue;
    readings.push({ text: span.text, how: spans.includes(span) ? "span" : "expr" });
  }
  // Nothing that looks like math: the text itself is the answer (`Tuesday`, `\text{odd}`), compared as text.
  if (readings.length === 0) readings.push({ text: trimmed, how: "whole" });
  return readings;
}
