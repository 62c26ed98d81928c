import type { ChatMessage } from "../../protocol/index.js";
import { assistantTexts } from "./completion-text.js";
import type { Parser } from "./parser.js";

/**
 * The whole text is the answer: the last non-empty assistant message, trimmed. Useful on
 * its own for free-form answers (a judge reads them) and as the inner parser of a
 * `ThinkParser`. Format reward: 1 when the final message has text, else 0.
 */
export class PlainParser implements Parser {
  readonly format = null;

  parseAnswer(completion: string | readonly ChatMessage[]): string | null {
    const texts = assistantTexts(completion);
    for (let i = texts.length - 1; i >= 0; i--) {
      const text = (texts[i] as string).trim();
      if (text) return text;
    }
    return null;
  }

  formatReward(completion: string | readonly ChatMessage[]): number {
    const texts = assistantTexts(completion);
    const last = texts[texts.length - 1];
    return last !== undefined && last.trim() !== "" ? 1 : 0;
  }
}
