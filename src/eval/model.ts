import type { AssistantMessage, ChatMessage, ToolDefinition } from "../protocol/index.js";

export interface ChatRequest {
  messages: readonly ChatMessage[];
  /** Offered to the model when the environment has tools. */
  tools: readonly ToolDefinition[];
  /** Extra request fields: max_tokens, temperature, top_p, seed… */
  sampling: Readonly<Record<string, unknown>>;
}

export interface ChatResult {
  message: AssistantMessage;
  /** The endpoint's finish_reason (`stop`, `length`, `tool_calls`…), or `unknown`. */
  finishReason: string;
  /** Token counts when the endpoint reports them. */
  usage: { inputTokens: number; outputTokens: number } | null;
}

/**
 * One chat-completion call. Implementations throw `EvalError`s (or anything their
 * `classify` understands); retries are the caller's, so they can be counted and reported.
 */
export interface ChatModel {
  readonly model: string;
  /** Where requests go, for the run's metadata (never the key). */
  readonly baseUrl: string;
  complete(request: ChatRequest, signal: AbortSignal): Promise<ChatResult>;
}
