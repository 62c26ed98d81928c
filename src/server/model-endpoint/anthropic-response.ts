import { completionIdSuffix, firstChoice, messageText, parseToolArguments, tokenCounts } from "./chat-completion-parts.js";
import type { ChatCompletion, ChatCompletionChoice } from "./chat-types.js";
import type { JsonObject } from "./request-fields.js";

/**
 * Chat Completions completion → Anthropic Messages answer, and Anthropic's error body. The
 * shapes are the fields of the Anthropic SDKs' `Message` that a chat completion can fill.
 */

/**
 * Non-standard field of a tool_use block, present only when the model's arguments were not
 * a JSON object: the block's `input` is then `{}` (Anthropic requires an object, and the
 * SDKs fail a stream whose input JSON does not parse) and this keeps what the model wrote.
 * The request translator sends it back upstream when an agent returns the block.
 */
export const RAW_ARGUMENTS_FIELD = "edgegym_raw_arguments";

export type AnthropicTextBlock = { type: "text"; text: string };
export type AnthropicToolUseBlock = { type: "tool_use"; id: string; name: string; input: JsonObject; [RAW_ARGUMENTS_FIELD]?: string };
export type AnthropicContentBlock = AnthropicTextBlock | AnthropicToolUseBlock;

export type AnthropicStopReason = "end_turn" | "max_tokens" | "stop_sequence" | "tool_use" | "refusal";

/** Anthropic counts cached prompt tokens apart from `input_tokens`; OpenAI's `prompt_tokens` includes them. */
export type AnthropicUsage = { input_tokens: number; output_tokens: number; cache_creation_input_tokens: number; cache_read_input_tokens: number };

export type AnthropicMessage = {
  id: string;
  type: "message";
  role: "assistant";
  model: string;
  content: AnthropicContentBlock[];
  stop_reason: AnthropicStopReason;
  stop_sequence: string | null;
  usage: AnthropicUsage;
};

function stopOf(choice: ChatCompletionChoice, hasToolCalls: boolean): { stop_reason: AnthropicStopReason; stop_sequence: string | null } {
  switch (choice.finish_reason) {
    case "length":
      return { stop_reason: "max_tokens", stop_sequence: null };
    case "content_filter":
      return { stop_reason: "refusal", stop_sequence: null };
    case "tool_calls":
    case "function_call":
      return { stop_reason: "tool_use", stop_sequence: null };
  }
  // Some servers finish a tool-calling turn with "stop"; the agent must still run the tools.
  if (hasToolCalls) return { stop_reason: "tool_use", stop_sequence: null };
  // vLLM names the stop string it matched (a number is a stop token id, not one of the agent's sequences).
  if (typeof choice.stop_reason === "string") return { stop_reason: "stop_sequence", stop_sequence: choice.stop_reason };
  return { stop_reason: "end_turn", stop_sequence: null };
}

/**
 * The Anthropic Messages answer for a completion (its first choice): a text block when the
 * model wrote text, then one tool_use block per tool call with its arguments parsed (see
 * {@link RAW_ARGUMENTS_FIELD} for arguments that do not parse). Reasoning is not returned:
 * Anthropic's thinking blocks need a signature no chat upstream gives. `model` is what the
 * agent asked for, so harnesses that check it see their own name.
 *
 * @example
 * chatToAnthropicResponse({ id: "chatcmpl-1", choices: [{ message: { content: "hi" }, finish_reason: "stop" }] }, "claude-sonnet-4-5")
 * // { id: "msg_1", type: "message", role: "assistant", model: "claude-sonnet-4-5", content: [{ type: "text", text: "hi" }], stop_reason: "end_turn", … }
 */
export function chatToAnthropicResponse(chat: ChatCompletion, requestedModel: string): AnthropicMessage {
  const choice = firstChoice(chat);
  const content: AnthropicContentBlock[] = [];
  const text = messageText(choice);
  if (text !== "") content.push({ type: "text", text });
  const calls = choice.message?.tool_calls ?? [];
  for (const call of calls) {
    const { input, invalid } = parseToolArguments(call.function.arguments);
    content.push({ type: "tool_use", id: call.id, name: call.function.name, input, ...(invalid ? { [RAW_ARGUMENTS_FIELD]: call.function.arguments } : {}) });
  }
  const counts = tokenCounts(chat);
  return {
    id: `msg_${completionIdSuffix(chat)}`,
    type: "message",
    role: "assistant",
    model: requestedModel,
    content,
    ...stopOf(choice, calls.length > 0),
    usage: {
      input_tokens: Math.max(0, counts.input - counts.cached),
      output_tokens: counts.output,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: counts.cached,
    },
  };
}

export type AnthropicErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "billing_error"
  | "permission_error"
  | "not_found_error"
  | "request_too_large"
  | "rate_limit_error"
  | "timeout_error"
  | "api_error"
  | "overloaded_error";

export type AnthropicErrorBody = { type: "error"; error: { type: AnthropicErrorType; message: string } };

/** Anthropic's error type for an HTTP status; the SDKs retry 429, 529 and 5xx and pick their exception class by status. */
export function anthropicErrorType(status: number): AnthropicErrorType {
  switch (status) {
    case 401:
      return "authentication_error";
    case 402:
      return "billing_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 504:
      return "timeout_error";
    case 529:
      return "overloaded_error";
  }
  return status >= 500 ? "api_error" : "invalid_request_error";
}

/**
 * An error body in Anthropic's shape, which the Anthropic SDKs and Claude Code parse.
 *
 * @example
 * anthropicError(429, "the episode's 50 model calls are used")
 * // { type: "error", error: { type: "rate_limit_error", message: "the episode's 50 model calls are used" } }
 */
export function anthropicError(status: number, message: string): AnthropicErrorBody {
  return { type: "error", error: { type: anthropicErrorType(status), message } };
}
