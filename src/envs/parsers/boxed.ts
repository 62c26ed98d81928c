import type { ChatMessage } from "../../protocol/index.js";
import { assistantTexts } from "./completion-text.js";
import type { Parser } from "./parser.js";

const BOXED = /\\(?:boxed|fbox)\s*\{/g;

/**
 * The content of the last `\boxed{…}` (or `\fbox{…}`) in the text, with nested braces
 * matched (`\boxed{\frac{1}{2}}` gives `\frac{1}{2}`), trimmed. Null when there is none
 * or the last one is never closed. Escaped braces (`\{`, `\}`) do not count as nesting.
 *
 * @example extractBoxed("so the answer is $\\boxed{\\frac{1}{2}}$") // "\\frac{1}{2}"
 */
export function extractBoxed(text: string): string | null {
  // Each box's opening brace, then one pass matching every brace with a stack: scanning
  // from each box to its end instead made 100,000 unclosed boxes take minutes.
  const boxBraces = [...text.matchAll(BOXED)].map((m) => m.index + m[0].length - 1);
  if (boxBraces.length === 0) return null;
  const isBox = new Set(boxBraces);
  const closeOf = new Map<number, number>();
  const open: number[] = [];
  for (let i = boxBraces[0] as number; i < text.length; i++) {
    const ch = text[i];
    if (ch === "\\") {
      i++; // skip the escaped character: `\{` is a literal brace
      continue;
    }
    if (ch === "{") open.push(i);
    else if (ch === "}") {
      const at = open.pop();
      if (at !== undefined && isBox.has(at)) closeOf.set(at, i);
    }
  }
  // The last closed box; an unclosed one (the model ran out of tokens inside it) is skipped.
  for (let k = boxBraces.length - 1; k >= 0; k--) {
    const brace = boxBraces[k] as number;
    const close = closeOf.get(brace);
    if (close !== undefined) return text.slice(brace + 1, close).trim();
  }
  return null;
}

/**
 * Answers written as `\boxed{…}`, the convention of math datasets. The answer is the last
 * box of the last assistant message that has one. Format reward: share of assistant
 * messages… of the final message only, in fact: 1 when it holds a closed box, else 0
 * (intermediate tool-calling turns need no box).
 */
export class BoxedParser implements Parser {
  readonly format = "\\boxed{…}";

  parseAnswer(completion: string | readonly ChatMessage[]): string | null {
    const texts = assistantTexts(completion);
    for (let i = texts.length - 1; i >= 0; i--) {
      const value = extractBoxed(texts[i] as string);
      if (value !== null) return value;
    }
    return null;
  }

  formatReward(completion: string | readonly ChatMessage[]): number {
    const texts = assistantTexts(completion);
    const last = texts[texts.length - 1];
    return last !== undefined && extractBoxed(last) !== null ? 1 : 0;
  }
}
