import { contentText, type ChatMessage } from "../../protocol/index.js";
import type { Parser } from "./parser.js";
import { PlainParser } from "./plain-parser.js";

export interface ThinkParserOptions {
  /** Reads the answer out of the text after `</think>`. Default: `PlainParser` (that whole text). */
  inner?: Parser;
  /** Tag name. Default `think`. */
  tag?: string;
  /**
   * Whether a message must open with a think block to earn the think half of the format
   * reward. Default true. Set it false for models whose server strips reasoning into
   * `reasoning_content`, so `content` never holds the tags.
   */
  requireThink?: boolean;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * For reasoning models: only what follows `</think>` is the answer region, so a model
 * thinking aloud about candidate answers is never graded on them. Wraps another parser
 * that reads the answer out of that region.
 *
 * The answer region of one message is the text after its last `</think>`; a message
 * that opens `<think>` and never closes it (cut off while thinking) has none; a message
 * without tags is all answer region.
 *
 * Format reward: half for the think block (exactly one, at the start, closed, followed by
 * an answer), averaged over the assistant messages that carry text, and half the inner
 * parser's format reward on the answer regions.
 *
 * @example
 * const parser = new ThinkParser({ inner: new XmlParser({ fields: ["answer"] }) });
 * parser.parseAnswer("<think>maybe <answer>3</answer>?</think><answer>4</answer>"); // "4"
 */
export class ThinkParser implements Parser {
  readonly inner: Parser;
  readonly tag: string;
  readonly format: string;
  private readonly requireThink: boolean;
  private readonly open: string;
  private readonly close: string;

  constructor(options: ThinkParserOptions = {}) {
    this.inner = options.inner ?? new PlainParser();
    this.tag = options.tag ?? "think";
    this.requireThink = options.requireThink ?? true;
    this.open = `<${this.tag}>`;
    this.close = `</${this.tag}>`;
    const think = `${this.open}…${this.close}`;
    this.format = `${this.requireThink ? think : `[${think}]`}\n${this.inner.format ?? "answer"}`;
  }

  /** The text after the last closing tag; null when a think block was opened and never closed. */
  answerRegion(text: string): string | null {
    const end = text.lastIndexOf(this.close);
    if (end >= 0) return text.slice(end + this.close.length);
    if (text.includes(this.open)) return null;
    return text;
  }

  /** The completion with each assistant message's content cut down to its answer region. */
  private answerRegions(completion: string | readonly ChatMessage[]): string | ChatMessage[] {
    if (typeof completion === "string") return this.answerRegion(completion) ?? "";
    return completion.map((m) => (m.role === "assistant" ? { ...m, content: this.answerRegion(contentText(m.content)) ?? "" } : m));
  }

  parseAnswer(completion: string | readonly ChatMessage[]): string | null {
    return this.inner.parseAnswer(this.answerRegions(completion));
  }

  /** 1 for one closed think block at the start followed by a non-empty answer region. */
  private thinkScore(text: string): number {
    const opens = text.split(this.open).length - 1;
    const closes = text.split(this.close).length - 1;
    if (opens === 0 && closes === 0) return this.requireThink ? 0 : 1;
    const wellFormed = new RegExp(`^\\s*${escapeRegExp(this.open)}[\\s\\S]*?${escapeRegExp(this.close)}\\s*\\S`).test(text);
    return opens === 1 && closes === 1 && wellFormed ? 1 : 0;
  }

  formatReward(completion: string | readonly ChatMessage[]): number {
    const texts =
      typeof completion === "string"
        ? [completion]
        : completion.filter((m) => m.role === "assistant").map((m) => contentText(m.content)).filter((t) => t.trim() !== "");
    if (texts.length === 0) return 0;
    const think = texts.reduce((sum, t) => sum + this.thinkScore(t), 0) / texts.length;
    return 0.5 * think + 0.5 * this.inner.formatReward(this.answerRegions(completion));
  }
}
