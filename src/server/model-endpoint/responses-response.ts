import { completionIdSuffix, createdAtSeconds, firstChoice, messageText, tokenCounts } from "./chat-completion-parts.js";
import type { ChatCompletion } from "./chat-types.js";
import { isObject } from "./request-fields.js";

/**
 * Chat Completions completion → OpenAI Responses `Response`. Besides the output, a Response
 * echoes the request's settings; the OpenAI SDKs' `Response` model requires `tools`,
 * `tool_choice` and `parallel_tool_calls`, so they are always present.
 */

export type ResponsesOutputText = { type: "output_text"; text: string; annotations: never[] };

export type ResponsesItemStatus = "in_progress" | "completed" | "incomplete";

export type ResponsesOutputMessage = {
  type: "message";
  id: string;
  status: ResponsesItemStatus;
  role: "assistant";
  content: ResponsesOutputText[];
};

export type ResponsesFunctionCall = {
  type: "function_call";
  id: string;
  call_id: string;
  name: string;
  arguments: string;
  status: ResponsesItemStatus;
};

export type ResponsesOutputItem = ResponsesOutputMessage | ResponsesFunctionCall;

export type ResponsesUsage = {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
};

export type ResponsesResponse = {
  id: string;
  object: "response";
  created_at: number;
  status: "in_progress" | "completed" | "incomplete";
  error: null;
  incomplete_details: { reason: "max_output_tokens" | "content_filter" } | null;
  instructions: string | null;
  max_output_tokens: number | null;
  metadata: Record<string, unknown>;
  model: string;
  output: ResponsesOutputItem[];
  parallel_tool_calls: boolean;
  previous_response_id: null;
  store: boolean;
  temperature: number | null;
  text: Record<string, unknown>;
  tool_choice: unknown;
  tools: unknown[];
  top_p: number | null;
  truncation: "disabled";
  usage: ResponsesUsage | null;
};

function numberOr<T>(value: unknown, fallback: T): number | T {
  return typeof value === "number" && Number.isFinite(value) ? value : fallback;
}

/**
 * The Responses answer for a completion (its first choice): a message item when the
 * model wrote text, then a function_call item per tool call (`call_id` is the chat tool
 * call's id, so the agent's function_call_output finds it). `finish_reason: "length"` makes
 * it `incomplete` with reason `max_output_tokens`, as OpenAI does. Reasoning is not
 * returned: a Responses reasoning item sent back would be dropped on the next call anyway.
 * `request` is the agent's Responses request, whose settings the answer echoes; without it
 * the defaults are echoed.
 *
 * @example
 * chatToResponsesResponse(completion, "gpt-5", request).output
 * // [{ type: "message", … content: [{ type: "output_text", text: "hi", annotations: [] }] }]
 */
export function chatToResponsesResponse(chat: ChatCompletion, requestedModel: string, request: Record<string, unknown> = {}): ResponsesResponse {
  const choice = firstChoice(chat);
  const suffix = completionIdSuffix(chat);
  const incompleteReason = choice.finish_reason === "length" ? "max_output_tokens" : choice.finish_reason === "content_filter" ? "content_filter" : null;
  const itemStatus: ResponsesItemStatus = incompleteReason ? "incomplete" : "completed";

  const output: ResponsesOutputItem[] = [];
  const text = messageText(choice);
  if (text !== "") output.push({ type: "message", id: `msg_${suffix}`, status: itemStatus, role: "assistant", content: [{ type: "output_text", text, annotations: [] }] });
  (choice.message?.tool_calls ?? []).forEach((call, i) => {
    output.push({ type: "function_call", id: `fc_${suffix}_${i}`, call_id: call.id, name: call.function.name, arguments: call.function.arguments, status: itemStatus });
  });

  const counts = tokenCounts(chat);
  return {
    id: `resp_${suffix}`,
    object: "response",
    created_at: createdAtSeconds(chat),
    status: incompleteReason ? "incomplete" : "completed",
    error: null,
    incomplete_details: incompleteReason ? { reason: incompleteReason } : null,
    instructions: typeof request.instructions === "string" ? request.instructions : null,
    max_output_tokens: numberOr(request.max_output_tokens, null),
    metadata: isObject(request.metadata) ? request.metadata : {},
    model: requestedModel,
    output,
    parallel_tool_calls: typeof request.parallel_tool_calls === "boolean" ? request.parallel_tool_calls : true,
    previous_response_id: null,
    // Nothing is kept whatever the agent asked: store echoes false so it does not expect to fetch the response later.
    store: false,
    temperature: numberOr(request.temperature, null),
    text: isObject(request.text) ? request.text : { format: { type: "text" } },
    tool_choice: request.tool_choice ?? "auto",
    tools: Array.isArray(request.tools) ? request.tools : [],
    top_p: numberOr(request.top_p, null),
    truncation: "disabled",
    usage: {
      input_tokens: counts.input,
      input_tokens_details: { cached_tokens: counts.cached, cache_write_tokens: 0 },
      output_tokens: counts.output,
      output_tokens_details: { reasoning_tokens: counts.reasoning },
      total_tokens: numberOr(chat.usage?.total_tokens, counts.input + counts.output),
    },
  };
}
