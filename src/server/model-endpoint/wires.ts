import type { ModelWire } from "../../protocol/index.js";
import type { ChatCompletion, WireAdapter } from "./wire.js";
import { chatCompletionToSse } from "./chat-sse.js";
import { anthropicToChatRequest } from "./anthropic-request.js";
import { anthropicError, chatToAnthropicResponse, type AnthropicMessage } from "./anthropic-response.js";
import { anthropicSseEvents } from "./anthropic-sse.js";
import { responsesToChatRequest } from "./responses-request.js";
import { chatToResponsesResponse, type ResponsesResponse } from "./responses-response.js";
import { responsesSseEvents } from "./responses-sse.js";

/** OpenAI's error body: what the openai SDKs and litellm read. */
function openAiError(status: number, message: string): Record<string, unknown> {
  const type = status === 401 ? "authentication_error" : status === 429 ? "rate_limit_error" : status >= 500 ? "server_error" : "invalid_request_error";
  return { error: { message, type, param: null, code: status === 410 ? "episode_ended" : null } };
}

const chat: WireAdapter = {
  wire: "chat",
  streamed: (request) => request.stream === true,
  toChat: (request) => request,
  fromChat: (completion) => completion,
  stream: (answer, request) => {
    const options = request.stream_options as { include_usage?: unknown } | undefined;
    return chatCompletionToSse(answer as ChatCompletion, { includeUsage: options?.include_usage === true });
  },
  error: openAiError,
};

const responses: WireAdapter = {
  wire: "responses",
  streamed: (request) => request.stream === true,
  toChat: (request) => responsesToChatRequest(request) as Record<string, unknown>,
  fromChat: (completion, request) => chatToResponsesResponse(completion, String(request.model ?? completion.model ?? ""), request),
  stream: (answer) => responsesSseEvents(answer as ResponsesResponse),
  error: openAiError,
};

const messages: WireAdapter = {
  wire: "messages",
  streamed: (request) => request.stream === true,
  toChat: (request) => anthropicToChatRequest(request) as Record<string, unknown>,
  fromChat: (completion, request) => chatToAnthropicResponse(completion, String(request.model ?? completion.model ?? "")),
  stream: (answer) => anthropicSseEvents(answer as AnthropicMessage),
  error: anthropicError,
};

/** The wires an episode's endpoint answers, by name. */
export const WIRES: Readonly<Record<ModelWire, WireAdapter>> = { chat, responses, messages };
