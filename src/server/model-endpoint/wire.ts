import type { ModelWire } from "../../protocol/index.js";
import type { ChatCompletion } from "./chat-types.js";

export type { ChatCompletion } from "./chat-types.js";

/**
 * One API an agent may call the endpoint with. The upstream always gets a non-streamed
 * Chat Completions request; the adapter turns the agent's request into it and the
 * upstream's completion back into what the agent's wire answers (a JSON body, or the same
 * content as that wire's stream events).
 */
export interface WireAdapter {
  wire: ModelWire;
  /** Whether the agent asked for a stream. */
  streamed(request: Record<string, unknown>): boolean;
  /** The Chat Completions request for the upstream (throws TranslationError for what cannot be translated). */
  toChat(request: Record<string, unknown>): Record<string, unknown>;
  /** The agent's answer for a completion. */
  fromChat(chat: ChatCompletion, request: Record<string, unknown>): Record<string, unknown>;
  /** The same answer as the wire's server-sent events, each a complete `event:`/`data:` block. */
  stream(answer: Record<string, unknown>, request: Record<string, unknown>): string[];
  /** An error body in the wire's own shape (the agent's SDK parses it). */
  error(status: number, message: string): Record<string, unknown>;
}
