import { describe, expect, it } from "vitest";
import { anthropicToChatRequest } from "./anthropic-request.js";
import { anthropicError, chatToAnthropicResponse, type AnthropicContentBlock, type AnthropicMessage } from "./anthropic-response.js";
import { anthropicSseEvents } from "./anthropic-sse.js";
import type { ChatCompletion } from "./chat-types.js";

const toolTurn: ChatCompletion = {
  id: "chatcmpl-7f3a",
  object: "chat.completion",
  created: 1,
  model: "Qwen/Qwen3-8B",
  choices: [
    {
      index: 0,
      message: {
        role: "assistant",
        content: "Let me look.",
        reasoning_content: "hidden",
        tool_calls: [
          { id: "call_a", type: "function", function: { name: "Bash", arguments: '{"command":"ls"}' } },
          { id: "call_b", type: "function", function: { name: "Read", arguments: '{"file_path": "/x' } },
        ],
      },
      finish_reason: "tool_calls",
    },
  ],
  usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120, prompt_tokens_details: { cached_tokens: 64 } },
};

function completion(message: ChatCompletion["choices"] extends (infer C)[] | undefined ? C : never): ChatCompletion {
  return { id: "chatcmpl-1", choices: [message], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } };
}

/** What the Anthropic SDKs do with a stream: fold the events back into a message. */
function foldStream(events: string[]): AnthropicMessage {
  let message: AnthropicMessage | null = null;
  const json = new Map<number, string>();
  for (const block of events) {
    const match = /^event: (\S+)\ndata: (.*)\n\n$/s.exec(block);
    if (!match) throw new Error(`malformed event ${JSON.stringify(block)}`);
    const data = JSON.parse(match[2] ?? "") as Record<string, unknown> & { type: string; index: number };
    expect(data.type).toBe(match[1]);
    if (data.type === "message_start") message = structuredClone(data.message as AnthropicMessage);
    else if (!message) throw new Error("event before message_start");
    else if (data.type === "content_block_start") message.content[data.index] = data.content_block as AnthropicContentBlock;
    else if (data.type === "content_block_delta") {
      const delta = data.delta as { type: string; text?: string; partial_json?: string };
      const target = message.content[data.index];
      if (delta.type === "text_delta" && target?.type === "text") target.text += delta.text;
      if (delta.type === "input_json_delta") json.set(data.index, (json.get(data.index) ?? "") + delta.partial_json);
    } else if (data.type === "content_block_stop") {
      const target = message.content[data.index];
      if (target?.type === "tool_use" && json.has(data.index)) target.input = JSON.parse(json.get(data.index) ?? "") as Record<string, unknown>;
    } else if (data.type === "message_delta") {
      const delta = data.delta as Pick<AnthropicMessage, "stop_reason" | "stop_sequence">;
      message.stop_reason = delta.stop_reason;
      message.stop_sequence = delta.stop_sequence;
      message.usage = { ...message.usage, ...(data.usage as AnthropicMessage["usage"]) };
    }
  }
  if (!message) throw new Error("no message_start");
  return message;
}

describe("chatToAnthropicResponse", () => {
  it("answers text then tool_use blocks, keeping unparseable arguments beside an empty input", () => {
    expect(chatToAnthropicResponse(toolTurn, "claude-sonnet-4-5")).toEqual({
      id: "msg_7f3a",
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5",
      content: [
        { type: "text", text: "Let me look." },
        { type: "tool_use", id: "call_a", name: "Bash", input: { command: "ls" } },
        { type: "tool_use", id: "call_b", name: "Read", input: {}, edgegym_raw_arguments: '{"file_path": "/x' },
      ],
      stop_reason: "tool_use",
      stop_sequence: null,
      // Anthropic counts cached prompt tokens apart.
      usage: { input_tokens: 36, output_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 64 },
    });
  });

  it("maps finish reasons to stop reasons", () => {
    const stop = (choice: Parameters<typeof completion>[0]) => {
      const m = chatToAnthropicResponse(completion(choice), "m");
      return [m.stop_reason, m.stop_sequence];
    };
    expect(stop({ message: { content: "a" }, finish_reason: "stop" })).toEqual(["end_turn", null]);
    expect(stop({ message: { content: "a" }, finish_reason: "length" })).toEqual(["max_tokens", null]);
    expect(stop({ message: { content: "a" }, finish_reason: "content_filter" })).toEqual(["refusal", null]);
    expect(stop({ message: { content: "a" }, finish_reason: "stop", stop_reason: "</done>" })).toEqual(["stop_sequence", "</done>"]);
    // A stop token id is the model ending its turn, not one of the agent's sequences.
    expect(stop({ message: { content: "a" }, finish_reason: "stop", stop_reason: 151645 })).toEqual(["end_turn", null]);
    expect(stop({ message: { content: null, tool_calls: [{ id: "t", function: { name: "f", arguments: "{}" } }] }, finish_reason: "stop" })).toEqual(["tool_use", null]);
    expect(stop({ message: { content: "a" }, finish_reason: "weird" })).toEqual(["end_turn", null]);
  });

  it("answers an empty completion without throwing", () => {
    const m = chatToAnthropicResponse({ choices: [] }, "m");
    expect(m).toMatchObject({ type: "message", role: "assistant", content: [], stop_reason: "end_turn", usage: { input_tokens: 0, output_tokens: 0 } });
    expect(m.id).toMatch(/^msg_[0-9a-f]{32}$/);
  });

  it("round-trips: a tool_use answer sent back as history gives the same assistant message", () => {
    const answer = chatToAnthropicResponse(toolTurn, "claude");
    const chat = anthropicToChatRequest({ max_tokens: 1, messages: [{ role: "assistant", content: answer.content }] });
    expect(chat.messages).toEqual([
      {
        role: "assistant",
        content: "Let me look.",
        tool_calls: [
          { id: "call_a", type: "function", function: { name: "Bash", arguments: '{"command":"ls"}' } },
          { id: "call_b", type: "function", function: { name: "Read", arguments: '{"file_path": "/x' } },
        ],
      },
    ]);
  });
});

describe("anthropicSseEvents", () => {
  it("emits the event sequence Anthropic streams", () => {
    const events = anthropicSseEvents(chatToAnthropicResponse(toolTurn, "claude"));
    expect(events.map((e) => /^event: (\S+)/.exec(e)?.[1])).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    const start = JSON.parse(events[0]?.split("data: ")[1] ?? "") as { message: AnthropicMessage };
    expect(start.message).toMatchObject({ content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 36, output_tokens: 0 } });
    const toolStart = JSON.parse(events[4]?.split("data: ")[1] ?? "") as { content_block: unknown };
    expect(toolStart.content_block).toEqual({ type: "tool_use", id: "call_a", name: "Bash", input: {} });
    const delta = JSON.parse(events[5]?.split("data: ")[1] ?? "") as { delta: unknown };
    expect(delta.delta).toEqual({ type: "input_json_delta", partial_json: '{"command":"ls"}' });
  });

  it("folds back into the message it was made from (text, tools, bad arguments, stop sequence)", () => {
    const messages = [
      chatToAnthropicResponse(toolTurn, "claude"),
      chatToAnthropicResponse(completion({ message: { content: "done </" }, finish_reason: "stop", stop_reason: "</done>" }), "claude"),
      chatToAnthropicResponse(completion({ message: { content: "" }, finish_reason: "length" }), "claude"),
    ];
    for (const message of messages) expect(foldStream(anthropicSseEvents(message))).toEqual(message);
  });
});

describe("anthropicError", () => {
  it("maps HTTP statuses to Anthropic error types", () => {
    const types = [400, 401, 402, 403, 404, 409, 410, 413, 422, 429, 500, 502, 503, 504, 529].map((s) => anthropicError(s, "m").error.type);
    expect(types).toEqual([
      "invalid_request_error",
      "authentication_error",
      "billing_error",
      "permission_error",
      "not_found_error",
      "invalid_request_error",
      "invalid_request_error",
      "request_too_large",
      "invalid_request_error",
      "rate_limit_error",
      "api_error",
      "api_error",
      "api_error",
      "timeout_error",
      "overloaded_error",
    ]);
    expect(anthropicError(429, "slow down")).toEqual({ type: "error", error: { type: "rate_limit_error", message: "slow down" } });
  });
});
