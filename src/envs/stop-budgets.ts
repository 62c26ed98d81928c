import { contentText, type ChatMessage } from "../protocol/index.js";
import type { StopCondition } from "./types.js";

/** Counts the tokens of a text. */
export type TokenCounter = (text: string) => number;

/**
 * The default token estimate: characters / 4, rounded up. It is the usual rule of thumb
 * for English with BPE tokenizers (OpenAI's own docs say ~4 characters per token); it
 * undercounts code and non-Latin text. Pass a real tokenizer's count where the budget
 * must be exact.
 */
export const approxTokens: TokenCounter = (text) => Math.ceil(text.length / 4);

/** The text a message puts into the context: content, reasoning, and tool calls' names and arguments. */
export function messageText(message: ChatMessage): string {
  let text = contentText(message.content);
  if (message.role === "assistant") {
    if (message.reasoning_content) text += message.reasoning_content;
    for (const call of message.tool_calls ?? []) text += call.function.name + call.function.arguments;
  }
  return text;
}

export interface BudgetOptions {
  maxTokens: number;
  /** Default `approxTokens` (characters / 4). */
  countTokens?: TokenCounter;
  /** Stop reason. Defaults: `prompt_budget`, `completion_budget`. */
  name?: string;
}

function checkBudget(opts: BudgetOptions, what: string): void {
  if (!(Number.isInteger(opts.maxTokens) && opts.maxTokens > 0)) throw new Error(`${what}: maxTokens must be a positive integer`);
}

/**
 * Stops when the next prompt the model would see (the whole transcript, this message and
 * the environment's reply included) is over `maxTokens`: the context window is full.
 * Truncates.
 *
 * @example stopConditions: [promptBudget({ maxTokens: 8192 })]
 */
export function promptBudget<State>(opts: BudgetOptions): StopCondition<State> {
  checkBudget(opts, "promptBudget");
  const count = opts.countTokens ?? approxTokens;
  return {
    name: opts.name ?? "prompt_budget",
    truncates: true,
    // Kept as a running total by the engine: the step reads no transcript.
    tally: { count: (m) => count(messageText(m)) },
    check: ({ tally, messages, message, reply }) => (tally ?? [...messages, message, ...(reply ?? [])].reduce((n, m) => n + count(messageText(m)), 0)) > opts.maxTokens,
  };
}

/**
 * Stops when the assistant messages of the episode (this one included) reach `maxTokens`:
 * the model has written its budget. Truncates.
 *
 * @example stopConditions: [completionBudget({ maxTokens: 4096, countTokens: (t) => tokenizer.encode(t).length })]
 */
export function completionBudget<State>(opts: BudgetOptions): StopCondition<State> {
  checkBudget(opts, "completionBudget");
  const count = opts.countTokens ?? approxTokens;
  return {
    name: opts.name ?? "completion_budget",
    truncates: true,
    tally: { count: (m, inPrompt) => (!inPrompt && m.role === "assistant" ? count(messageText(m)) : 0) },
    check: ({ tally, messages, message, promptLength }) => {
      if (tally !== undefined) return tally >= opts.maxTokens;
      const written = messages.slice(promptLength ?? 0).filter((m) => m.role === "assistant");
      return [...written, message].reduce((n, m) => n + count(messageText(m)), 0) >= opts.maxTokens;
    },
  };
}

export interface ErrorStopOptions {
  /** Also stop when any tool call of this message failed. Default false (the model sees the error and may retry). */
  onToolError?: boolean;
  /** Stop reason. Default `error`. */
  name?: string;
}

/**
 * Stops when the state holds a non-empty `error` (an environment's way to end an episode
 * it cannot go on with, without throwing), or, with `onToolError`, when a tool call
 * failed. Truncates. An environment that throws stops with `env_error` regardless.
 */
export function errorStop<State>(opts: ErrorStopOptions = {}): StopCondition<State> {
  return {
    name: opts.name ?? "error",
    truncates: true,
    check: ({ state, toolErrors }) => {
      const flagged = typeof state === "object" && state !== null && "error" in state ? (state as { error?: unknown }).error : undefined;
      if (flagged !== undefined && flagged !== null && flagged !== false && flagged !== "") return true;
      return Boolean(opts.onToolError && (toolErrors ?? 0) > 0);
    },
  };
}
