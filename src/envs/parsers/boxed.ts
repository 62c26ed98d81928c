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
  const starts = [...text.matchAll(BOXED)].map((m) => m.index + m[0].length);
  for (let k = starts.length - 1; k >= 0; k--) {
    const start = starts[k] as number;
    let depth = 1;
    for (let i = start; i < text.length; i++) {
      const ch = text[i];
      if (ch === "\\") {
        i++; // skip the escaped character: `\{` is a literal brace
        continue;
      }
      if (ch === "{") depth++;
      else if (ch === "}" && --depth === 0) return text.slice(start, i).trim();
    }
    // Unclosed (the model ran out of tokens inside it): try the one before.
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
