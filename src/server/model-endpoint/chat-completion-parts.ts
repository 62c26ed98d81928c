import type { ChatCompletion, ChatCompletionChoice } from "./chat-types.js";
import { isObject, type JsonObject } from "./request-fields.js";

/**
 * What the Anthropic and Responses answers read from an upstream completion. The
 * completion is trusted no further than its shape: a missing field reads as empty, never
 * as an exception, because the call has already been made and must still be answered.
 */

/** The choice the other wires answer with: they have no `n`, so only the first. */
export function firstChoice(chat: ChatCompletion): ChatCompletionChoice {
  return chat.choices?.[0] ?? {};
}

/**
 * The part of the completion's id that names this call, for the other wires' ids
 * (`msg_…`, `resp_…`): the same completion always gets the same ids, so a recorded call
 * and the answer the agent saw agree.
 */
export function completionIdSuffix(chat: ChatCompletion): string {
  const raw = typeof chat.id === "string" ? chat.id.replace(/^chatcmpl-/, "") : "";
  const safe = raw.replace(/[^A-Za-z0-9_-]/g, "");
  return safe !== "" ? safe : crypto.randomUUID().replace(/-/g, "");
}

export function createdAtSeconds(chat: ChatCompletion): number {
  return typeof chat.created === "number" ? chat.created : Math.floor(Date.now() / 1000);
}

/** The completion's text, or "" (content null or absent). */
export function messageText(choice: ChatCompletionChoice): string {
  const content = choice.message?.content;
  return typeof content === "string" ? content : "";
}

export type TokenCounts = { input: number; output: number; cached: number; reasoning: number };

export function tokenCounts(chat: ChatCompletion): TokenCounts {
  const usage = chat.usage;
  const count = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) ? value : 0);
  return {
    input: count(usage?.prompt_tokens),
    output: count(usage?.completion_tokens),
    cached: count(usage?.prompt_tokens_details?.cached_tokens),
    reasoning: count(usage?.completion_tokens_details?.reasoning_tokens),
  };
}

/**
 * A tool call's `arguments` as the object the Anthropic wire needs. A model can emit
 * arguments that are not a JSON object (truncated at max_tokens, or just malformed); the
 * agent then gets `{}` (its tool reports the missing parameters to the model) and the raw
 * text is returned for the caller to keep.
 */
export function parseToolArguments(raw: string): { input: JsonObject; invalid: boolean } {
  if (raw.trim() === "") return { input: {}, invalid: false };
  try {
    const parsed: unknown = JSON.parse(raw);
    if (isObject(parsed)) return { input: parsed, invalid: false };
  } catch {
    // Falls through to the invalid answer below.
  }
  return { input: {}, invalid: true };
}
