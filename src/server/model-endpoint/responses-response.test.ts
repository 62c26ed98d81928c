import { describe, expect, it } from "vitest";
import type { ChatCompletion } from "./chat-types.js";
import { responsesToChatRequest } from "./responses-request.js";
import { chatToResponsesResponse, type ResponsesOutputItem, type ResponsesResponse } from "./responses-response.js";
import { responsesSseEvents } from "./responses-sse.js";

const toolTurn: ChatCompletion = {
  id: "chatcmpl-9b1",
  created: 1_760_000_000,
  model: "Qwen/Qwen3-8B",
  choices: [
    {
      index: 0,
      message: {
        role: "assistant",
        content: "Running it.",
        tool_calls: [
          { id: "call_x", type: "function", function: { name: "shell", arguments: '{"command":["ls"]}' } },
          { id: "call_y", type: "function", function: { name: "shell", arguments: "" } },
        ],
      },
      finish_reason: "tool_calls",
    },
  ],
  usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60, completion_tokens_details: { reasoning_tokens: 4 } },
};

const truncated: ChatCompletion = { id: "chatcmpl-2", created: 2, choices: [{ message: { content: "Once upon" }, finish_reason: "length" }], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } };

type Event = Record<string, unknown> & { type: string; sequence_number: number };

function parse(events: string[]): Event[] {
  return events.map((block) => {
    const match = /^event: (\S+)\ndata: (.*)\n\n$/s.exec(block);
    if (!match) throw new Error(`malformed event ${JSON.stringify(block)}`);
    const data = JSON.parse(match[2] ?? "") as Event;
    expect(data.type).toBe(match[1]);
    return data;
  });
}

/** What a streaming client does: build the output from the item and delta events. */
function fold(events: Event[]): ResponsesOutputItem[] {
  const items: ResponsesOutputItem[] = [];
  for (const e of events) {
    const index = e.output_index as number;
    const item = items[index];
    if (e.type === "response.output_item.added") items[index] = structuredClone(e.item as ResponsesOutputItem);
    else if (e.type === "response.content_part.added" && item?.type === "message") item.content.push(structuredClone(e.part as never));
    else if (e.type === "response.output_text.delta" && item?.type === "message") {
      const part = item.content[e.content_index as number];
      if (part) part.text += e.delta as string;
    } else if (e.type === "response.function_call_arguments.delta" && item?.type === "function_call") item.arguments += e.delta as string;
    else if (e.type === "response.output_item.done") items[index] = { ...(items[index] as ResponsesOutputItem), status: (e.item as ResponsesOutputItem).status };
  }
  return items;
}

describe("chatToResponsesResponse", () => {
  it("answers a message item then a function_call item per tool call, echoing the request's settings", () => {
    const request = { model: "gpt-5-codex", instructions: "Be brief.", input: "x", tools: [{ type: "function", name: "shell" }], tool_choice: "auto", parallel_tool_calls: false, temperature: 0.5 };
    expect(chatToResponsesResponse(toolTurn, "gpt-5-codex", request)).toEqual({
      id: "resp_9b1",
      object: "response",
      created_at: 1_760_000_000,
      status: "completed",
      error: null,
      incomplete_details: null,
      instructions: "Be brief.",
      max_output_tokens: null,
      metadata: {},
      model: "gpt-5-codex",
      output: [
        { type: "message", id: "msg_9b1", status: "completed", role: "assistant", content: [{ type: "output_text", text: "Running it.", annotations: [] }] },
        { type: "function_call", id: "fc_9b1_0", call_id: "call_x", name: "shell", arguments: '{"command":["ls"]}', status: "completed" },
        { type: "function_call", id: "fc_9b1_1", call_id: "call_y", name: "shell", arguments: "", status: "completed" },
      ],
      parallel_tool_calls: false,
      previous_response_id: null,
      store: false,
      temperature: 0.5,
      text: { format: { type: "text" } },
      tool_choice: "auto",
      tools: [{ type: "function", name: "shell" }],
      top_p: null,
      truncation: "disabled",
      usage: { input_tokens: 50, input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 }, output_tokens: 10, output_tokens_details: { reasoning_tokens: 4 }, total_tokens: 60 },
    });
  });

  it("is incomplete with reason max_output_tokens when the completion hit its length", () => {
    const r = chatToResponsesResponse(truncated, "m");
    expect(r).toMatchObject({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" }, tool_choice: "auto", tools: [], parallel_tool_calls: true });
    expect(r.output[0]?.status).toBe("incomplete");
  });

  it("answers an empty completion without throwing", () => {
    const r = chatToResponsesResponse({}, "m");
    expect(r).toMatchObject({ status: "completed", output: [], usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 } });
    expect(r.id).toMatch(/^resp_[0-9a-f]{32}$/);
  });

  it("round-trips: output items sent back as input give the assistant message the upstream produced", () => {
    const r = chatToResponsesResponse(toolTurn, "m");
    const chat = responsesToChatRequest({ input: r.output });
    expect(chat.messages).toEqual([{ role: "assistant", content: "Running it.", tool_calls: toolTurn.choices?.[0]?.message?.tool_calls }]);
  });
});

describe("responsesSseEvents", () => {
  it("emits the Responses event sequence, numbered from 0", () => {
    const events = parse(responsesSseEvents(chatToResponsesResponse(toolTurn, "m")));
    expect(events.map((e) => e.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events[0]?.response).toMatchObject({ status: "in_progress", output: [], usage: null });
    expect(events[2]).toMatchObject({ output_index: 0, item: { type: "message", status: "in_progress", content: [] } });
    expect(events[4]).toMatchObject({ item_id: "msg_9b1", output_index: 0, content_index: 0, delta: "Running it.", logprobs: [] });
    expect(events[10]).toMatchObject({ item_id: "fc_9b1_0", output_index: 1, arguments: '{"command":["ls"]}' });
  });

  it("folds back into the response's output, and ends with its final state", () => {
    for (const response of [chatToResponsesResponse(toolTurn, "m"), chatToResponsesResponse(truncated, "m")]) {
      const events = parse(responsesSseEvents(response));
      expect(fold(events)).toEqual(response.output);
      expect((events.at(-1)?.response as ResponsesResponse | undefined)).toEqual(response);
    }
  });

  it("ends an incomplete response with response.incomplete, as OpenAI does", () => {
    const events = parse(responsesSseEvents(chatToResponsesResponse(truncated, "m")));
    expect(events.at(-1)?.type).toBe("response.incomplete");
  });
});
