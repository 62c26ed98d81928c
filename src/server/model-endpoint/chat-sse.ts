import type {
  ChatChunkChoice,
  ChatCompletion,
  ChatCompletionChoice,
  ChatCompletionChunk,
  ChatDelta,
  ChatLogprobs,
  ChatTokenLogprob,
  ChatToolCallReceived,
  ChatUsage,
} from "./chat-types.js";
import { isObject } from "./request-fields.js";

/**
 * Chat Completions streaming, both ways. The upstream is always called without `stream`,
 * so an agent that asked for a stream gets the finished completion replayed as the chunks
 * OpenAI would have sent; and a recorded stream can be folded back into one completion.
 */

export type ChatSseOptions = {
  /** The agent's `stream_options.include_usage`: OpenAI then sends usage in a last chunk with no choices. */
  includeUsage?: boolean;
};

const DONE = "data: [DONE]\n\n";

function sse(chunk: ChatCompletionChunk): string {
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

/**
 * The `chat.completion.chunk` events of a stream equivalent to a complete completion, each
 * a full `data: …\n\n` block, ending with `data: [DONE]`. Per choice: a role chunk, the
 * reasoning and content as one chunk each, each tool call as a header chunk (index, id,
 * type, name) and an arguments chunk, then a chunk with `finish_reason`. vLLM's token
 * fields land where vLLM puts them: `prompt_token_ids` on the first chunk, a choice's
 * `token_ids` (with its `logprobs`) on its content chunk, or its last chunk when it has no
 * text.
 *
 * @example
 * const events = chatCompletionToSse(completion, { includeUsage: request.stream_options?.include_usage === true });
 * return new Response(events.join(""), { headers: { "content-type": "text/event-stream" } });
 */
export function chatCompletionToSse(completion: ChatCompletion, options: ChatSseOptions = {}): string[] {
  const includeUsage = options.includeUsage === true;
  const head = {
    id: completion.id ?? "chatcmpl-edgegym",
    object: "chat.completion.chunk" as const,
    created: completion.created ?? Math.floor(Date.now() / 1000),
    model: completion.model ?? "",
    ...(completion.system_fingerprint != null ? { system_fingerprint: completion.system_fingerprint } : {}),
    // OpenAI marks every chunk `usage: null` when the last one will carry it.
    ...(includeUsage ? { usage: null } : {}),
  };
  const events: string[] = [];
  let first = true;
  const emit = (choice: ChatChunkChoice): void => {
    const promptIds = first && Array.isArray(completion.prompt_token_ids) ? { prompt_token_ids: completion.prompt_token_ids } : {};
    first = false;
    events.push(sse({ ...head, ...promptIds, choices: [choice] }));
  };

  const choices = [...(completion.choices ?? [])].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
  choices.forEach((choice, position) => {
    const index = choice.index ?? position;
    const message = choice.message ?? {};
    const chunk = (delta: ChatDelta, extra: Partial<ChatChunkChoice> = {}): ChatChunkChoice => ({ index, delta, finish_reason: null, ...extra });
    const sampled = {
      ...(choice.logprobs != null ? { logprobs: choice.logprobs } : {}),
      ...(Array.isArray(choice.token_ids) ? { token_ids: choice.token_ids } : {}),
    };
    let sampledSent = false;

    emit(chunk({ role: "assistant", content: "" }));
    if (typeof message.reasoning_content === "string" && message.reasoning_content !== "") emit(chunk({ reasoning_content: message.reasoning_content }));
    if (typeof message.reasoning === "string" && message.reasoning !== "") emit(chunk({ reasoning: message.reasoning }));
    if (typeof message.content === "string" && message.content !== "") {
      emit(chunk({ content: message.content }, sampled));
      sampledSent = true;
    }
    if (typeof message.refusal === "string" && message.refusal !== "") emit(chunk({ refusal: message.refusal }));
    (message.tool_calls ?? []).forEach((call, callIndex) => {
      emit(chunk({ tool_calls: [{ index: callIndex, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }] }));
      if (call.function.arguments !== "") emit(chunk({ tool_calls: [{ index: callIndex, function: { arguments: call.function.arguments } }] }));
    });
    emit(
      chunk({}, {
        finish_reason: choice.finish_reason ?? "stop",
        ...(choice.stop_reason !== undefined ? { stop_reason: choice.stop_reason } : {}),
        ...(sampledSent ? {} : sampled),
      }),
    );
  });

  if (includeUsage && completion.usage) events.push(sse({ ...head, choices: [], usage: completion.usage }));
  events.push(DONE);
  return events;
}

/** The JSON payloads of SSE text: one event per block, its `data:` lines joined as the SSE spec says. */
function dataPayloads(text: string): string[] {
  const payloads: string[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    const data = block
      .split(/\r?\n/)
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(5).replace(/^ /, ""));
    if (data.length > 0) payloads.push(data.join("\n"));
  }
  return payloads;
}

type ChoiceDraft = {
  content: string;
  reasoning: string | null;
  reasoningContent: string | null;
  refusal: string | null;
  toolCalls: Map<number, { id: string; type: string; name: string; arguments: string }>;
  finishReason: string | null;
  stopReason: string | number | null | undefined;
  logprobs: ChatTokenLogprob[] | null;
  tokenIds: number[] | null;
};

function appendLogprobs(draft: ChoiceDraft, logprobs: ChatLogprobs | null | undefined): void {
  if (logprobs && Array.isArray(logprobs.content)) draft.logprobs = [...(draft.logprobs ?? []), ...logprobs.content];
}

/**
 * One `chat.completion` from the chunks of a stream (SSE event strings, a whole SSE body, or
 * parsed chunks): content and reasoning concatenated, tool calls gathered by index, the
 * last `finish_reason` and usage, `logprobs.content` and vLLM's `token_ids` concatenated,
 * vLLM's `prompt_token_ids` from the chunk that had them. Lines that are not JSON chunks
 * (`[DONE]`, `event:` lines, comments) are skipped.
 */
export function assembleChatStream(events: readonly (string | ChatCompletionChunk)[]): ChatCompletion {
  const chunks: ChatCompletionChunk[] = [];
  for (const event of events) {
    if (typeof event !== "string") {
      chunks.push(event);
      continue;
    }
    for (const payload of dataPayloads(event)) {
      if (payload.trim() === "[DONE]") continue;
      const parsed: unknown = JSON.parse(payload);
      if (isObject(parsed) && Array.isArray(parsed.choices)) chunks.push(parsed as ChatCompletionChunk);
    }
  }

  const drafts = new Map<number, ChoiceDraft>();
  let usage: ChatUsage | null = null;
  let promptTokenIds: number[] | null = null;
  for (const chunk of chunks) {
    if (chunk.usage) usage = chunk.usage;
    if (promptTokenIds === null && Array.isArray(chunk.prompt_token_ids)) promptTokenIds = chunk.prompt_token_ids;
    for (const choice of chunk.choices) {
      const index = typeof choice.index === "number" ? choice.index : 0;
      let draft = drafts.get(index);
      if (!draft) {
        draft = { content: "", reasoning: null, reasoningContent: null, refusal: null, toolCalls: new Map(), finishReason: null, stopReason: undefined, logprobs: null, tokenIds: null };
        drafts.set(index, draft);
      }
      const delta = choice.delta ?? {};
      if (typeof delta.content === "string") draft.content += delta.content;
      if (typeof delta.reasoning === "string") draft.reasoning = (draft.reasoning ?? "") + delta.reasoning;
      if (typeof delta.reasoning_content === "string") draft.reasoningContent = (draft.reasoningContent ?? "") + delta.reasoning_content;
      if (typeof delta.refusal === "string") draft.refusal = (draft.refusal ?? "") + delta.refusal;
      for (const part of delta.tool_calls ?? []) {
        const call = draft.toolCalls.get(part.index) ?? { id: "", type: "function", name: "", arguments: "" };
        if (part.id) call.id = part.id;
        if (part.type) call.type = part.type;
        // A name arrives whole in the first fragment; appending tolerates servers that split it.
        if (part.function?.name) call.name += part.function.name;
        if (part.function?.arguments) call.arguments += part.function.arguments;
        draft.toolCalls.set(part.index, call);
      }
      if (choice.finish_reason) draft.finishReason = choice.finish_reason;
      if (choice.stop_reason !== undefined) draft.stopReason = choice.stop_reason;
      appendLogprobs(draft, choice.logprobs);
      if (Array.isArray(choice.token_ids)) draft.tokenIds = [...(draft.tokenIds ?? []), ...choice.token_ids];
    }
  }

  const choices: ChatCompletionChoice[] = [...drafts.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, draft]) => {
      const toolCalls: ChatToolCallReceived[] = [...draft.toolCalls.entries()]
        .sort(([a], [b]) => a - b)
        .map(([, call]) => ({ id: call.id, type: call.type, function: { name: call.name, arguments: call.arguments } }));
      return {
        index,
        message: {
          role: "assistant",
          // OpenAI's null content for a turn that is only tool calls.
          content: draft.content === "" && toolCalls.length > 0 ? null : draft.content,
          ...(draft.reasoningContent !== null ? { reasoning_content: draft.reasoningContent } : {}),
          ...(draft.reasoning !== null ? { reasoning: draft.reasoning } : {}),
          ...(draft.refusal !== null ? { refusal: draft.refusal } : {}),
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        finish_reason: draft.finishReason,
        logprobs: draft.logprobs ? { content: draft.logprobs } : null,
        ...(draft.stopReason !== undefined ? { stop_reason: draft.stopReason } : {}),
        ...(draft.tokenIds ? { token_ids: draft.tokenIds } : {}),
      };
    });

  const first = chunks[0];
  return {
    id: first?.id ?? "",
    object: "chat.completion",
    created: first?.created ?? 0,
    model: first?.model ?? "",
    ...(first?.system_fingerprint != null ? { system_fingerprint: first.system_fingerprint } : {}),
    choices,
    ...(usage ? { usage } : {}),
    ...(promptTokenIds ? { prompt_token_ids: promptTokenIds } : {}),
  };
}
