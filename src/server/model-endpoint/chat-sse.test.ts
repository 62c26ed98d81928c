import { describe, expect, it } from "vitest";
import { assembleChatStream, chatCompletionToSse } from "./chat-sse.js";
import type { ChatCompletion, ChatCompletionChunk } from "./chat-types.js";

const textCompletion: ChatCompletion = {
  id: "chatcmpl-abc",
  object: "chat.completion",
  created: 1_760_000_000,
  model: "Qwen/Qwen3-0.6B",
  choices: [
    {
      index: 0,
      message: { role: "assistant", content: "Hello there", reasoning_content: "the user greets me" },
      finish_reason: "stop",
      logprobs: { content: [{ token: "Hello", logprob: -0.1, bytes: [72], top_logprobs: [] }, { token: " there", logprob: -0.2, bytes: [32], top_logprobs: [] }] },
      stop_reason: null,
      token_ids: [9707, 1052],
    },
  ],
  usage: { prompt_tokens: 12, completion_tokens: 2, total_tokens: 14 },
  prompt_token_ids: [1, 2, 3],
};

const toolCompletion: ChatCompletion = {
  id: "chatcmpl-tools",
  object: "chat.completion",
  created: 1_760_000_001,
  model: "m",
  choices: [
    {
      index: 0,
      message: {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "bash", arguments: '{"command":"ls -la"}' } },
          { id: "call_2", type: "function", function: { name: "noop", arguments: "" } },
        ],
      },
      finish_reason: "tool_calls",
      logprobs: null,
      token_ids: [5, 6, 7],
    },
  ],
  usage: { prompt_tokens: 30, completion_tokens: 3, total_tokens: 33 },
};

function chunksOf(events: string[]): ChatCompletionChunk[] {
  return events.filter((e) => e !== "data: [DONE]\n\n").map((e) => JSON.parse(e.slice("data: ".length)) as ChatCompletionChunk);
}

describe("chatCompletionToSse", () => {
  it("emits well-formed data events ending with [DONE]", () => {
    const events = chatCompletionToSse(textCompletion, { includeUsage: true });
    for (const e of events) expect(e).toMatch(/^data: .*\n\n$/s);
    expect(events.at(-1)).toBe("data: [DONE]\n\n");
    for (const chunk of chunksOf(events)) {
      expect(chunk).toMatchObject({ id: "chatcmpl-abc", object: "chat.completion.chunk", created: 1_760_000_000, model: "Qwen/Qwen3-0.6B" });
    }
  });

  it("sends a role chunk, reasoning, content with its logprobs and token ids, then the finish reason", () => {
    const chunks = chunksOf(chatCompletionToSse(textCompletion));
    expect(chunks.map((c) => c.choices[0]?.delta)).toEqual([{ role: "assistant", content: "" }, { reasoning_content: "the user greets me" }, { content: "Hello there" }, {}]);
    expect(chunks[0]?.prompt_token_ids).toEqual([1, 2, 3]);
    expect(chunks[1]?.prompt_token_ids).toBeUndefined();
    expect(chunks[2]?.choices[0]?.token_ids).toEqual([9707, 1052]);
    expect(chunks[2]?.choices[0]?.logprobs?.content).toHaveLength(2);
    expect(chunks.at(-1)?.choices[0]).toMatchObject({ finish_reason: "stop", delta: {} });
    expect(chunks.slice(0, -1).every((c) => c.choices[0]?.finish_reason === null)).toBe(true);
    // No usage chunk unless asked.
    expect(chunks.every((c) => c.choices.length === 1 && c.usage === undefined)).toBe(true);
  });

  it("streams each tool call as a header then its arguments, and token ids on the last chunk when there is no text", () => {
    const chunks = chunksOf(chatCompletionToSse(toolCompletion));
    const toolDeltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(toolDeltas).toEqual([
      { index: 0, id: "call_1", type: "function", function: { name: "bash", arguments: "" } },
      { index: 0, function: { arguments: '{"command":"ls -la"}' } },
      { index: 1, id: "call_2", type: "function", function: { name: "noop", arguments: "" } },
    ]);
    expect(chunks.at(-1)?.choices[0]).toMatchObject({ finish_reason: "tool_calls", token_ids: [5, 6, 7] });
  });

  it("adds a usage chunk with no choices when include_usage is set, and marks the others usage: null", () => {
    const chunks = chunksOf(chatCompletionToSse(textCompletion, { includeUsage: true }));
    const last = chunks.at(-1);
    expect(last?.choices).toEqual([]);
    expect(last?.usage).toEqual({ prompt_tokens: 12, completion_tokens: 2, total_tokens: 14 });
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
  });

  it("streams every choice of an n>1 completion under its own index", () => {
    const two: ChatCompletion = { ...textCompletion, choices: [{ index: 1, message: { content: "b" }, finish_reason: "length" }, { index: 0, message: { content: "a" }, finish_reason: "stop" }] };
    const back = assembleChatStream(chatCompletionToSse(two));
    expect(back.choices?.map((c) => [c.index, c.message?.content, c.finish_reason])).toEqual([
      [0, "a", "stop"],
      [1, "b", "length"],
    ]);
  });
});

describe("assembleChatStream", () => {
  it("round-trips a text completion with reasoning, logprobs and vLLM token ids", () => {
    const back = assembleChatStream(chatCompletionToSse(textCompletion, { includeUsage: true }));
    expect(back).toEqual({ ...textCompletion });
  });

  it("round-trips a tool-call completion (content null, calls by index)", () => {
    const back = assembleChatStream(chatCompletionToSse(toolCompletion, { includeUsage: true }));
    expect(back).toEqual(toolCompletion);
  });

  it("accepts a whole SSE body, parsed chunks, CRLF, event lines and comments", () => {
    const body = chatCompletionToSse(toolCompletion, { includeUsage: true }).join("").replace(/\n/g, "\r\n");
    expect(assembleChatStream([`: keep-alive\r\n\r\n${body}`])).toEqual(toolCompletion);
    expect(assembleChatStream(chunksOf(chatCompletionToSse(toolCompletion, { includeUsage: true })))).toEqual(toolCompletion);
  });

  it("joins arguments split over many chunks and concatenates logprobs and token ids across chunks, as vLLM streams them", () => {
    const base = { id: "c", object: "chat.completion.chunk" as const, created: 1, model: "m" };
    const chunks: ChatCompletionChunk[] = [
      { ...base, prompt_token_ids: [7, 8], choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] },
      { ...base, choices: [{ index: 0, delta: { content: "Hi" }, finish_reason: null, logprobs: { content: [{ token: "Hi", logprob: -1 }] }, token_ids: [10] }] },
      { ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "t", type: "function", function: { name: "f", arguments: '{"a"' } }] }, finish_reason: null, token_ids: [11] }] },
      { ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: ": 1}" } }] }, finish_reason: null, token_ids: [12] }] },
      { ...base, choices: [{ index: 0, delta: {}, finish_reason: "tool_calls", logprobs: { content: [{ token: "x", logprob: -2 }] }, token_ids: [] }] },
    ];
    const back = assembleChatStream(chunks);
    expect(back.prompt_token_ids).toEqual([7, 8]);
    expect(back.choices?.[0]).toEqual({
      index: 0,
      message: { role: "assistant", content: "Hi", tool_calls: [{ id: "t", type: "function", function: { name: "f", arguments: '{"a": 1}' } }] },
      finish_reason: "tool_calls",
      logprobs: { content: [{ token: "Hi", logprob: -1 }, { token: "x", logprob: -2 }] },
      token_ids: [10, 11, 12],
    });
    expect(back.usage).toBeUndefined();
  });
});
