import { describe, expect, it } from "vitest";
import { anthropicToChatRequest } from "./anthropic-request.js";
import { TranslationError } from "./translation-error.js";

const PNG = "iVBORw0KGgo=";

/** A Claude Code-style exchange: a tool call, its result and a system reminder, then the next call. */
const claudeConversation = {
  model: "claude-sonnet-4-5",
  max_tokens: 32_000,
  stream: true,
  temperature: 1,
  metadata: { user_id: "u" },
  thinking: { type: "enabled", budget_tokens: 1024 },
  system: [
    { type: "text", text: "You are Claude Code.", cache_control: { type: "ephemeral" } },
    { type: "text", text: "Be careful." },
  ],
  messages: [
    { role: "user", content: [{ type: "text", text: "<system-reminder>ctx</system-reminder>" }, { type: "text", text: "List the files" }] },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "I should run ls", signature: "sig" },
        { type: "text", text: "I'll list them." },
        { type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "ls" } },
        { type: "tool_use", id: "toolu_2", name: "Read", input: { file_path: "/a.png" } },
      ],
    },
    {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "toolu_1", content: "a.png\nb.txt" },
        { type: "tool_result", tool_use_id: "toolu_2", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: PNG } }] },
        { type: "text", text: "Now describe a.png" },
      ],
    },
  ],
  tools: [{ name: "Bash", description: "Run a command", input_schema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] }, cache_control: { type: "ephemeral" } }],
  tool_choice: { type: "auto", disable_parallel_tool_use: true },
  stop_sequences: ["</done>"],
};

describe("anthropicToChatRequest", () => {
  it("turns tool_use then tool_result into assistant tool_calls then tool messages, before the user's text", () => {
    expect(anthropicToChatRequest(claudeConversation)).toEqual({
      model: "claude-sonnet-4-5",
      max_tokens: 32_000,
      temperature: 1,
      stop: ["</done>"],
      messages: [
        { role: "system", content: "You are Claude Code.\n\nBe careful." },
        {
          role: "user",
          content: [
            { type: "text", text: "<system-reminder>ctx</system-reminder>" },
            { type: "text", text: "List the files" },
          ],
        },
        {
          role: "assistant",
          content: "I'll list them.",
          tool_calls: [
            { id: "toolu_1", type: "function", function: { name: "Bash", arguments: '{"command":"ls"}' } },
            { id: "toolu_2", type: "function", function: { name: "Read", arguments: '{"file_path":"/a.png"}' } },
          ],
        },
        { role: "tool", tool_call_id: "toolu_1", content: "a.png\nb.txt" },
        { role: "tool", tool_call_id: "toolu_2", content: "" },
        // The tool's image cannot ride in a tool message: it follows, with the user's text, in order.
        {
          role: "user",
          content: [
            { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } },
            { type: "text", text: "Now describe a.png" },
          ],
        },
      ],
      tools: [
        {
          type: "function",
          function: { name: "Bash", description: "Run a command", parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] } },
        },
      ],
      tool_choice: "auto",
      parallel_tool_calls: false,
    });
  });

  it("keeps a string system and string contents as strings, and a single text block as a string", () => {
    const chat = anthropicToChatRequest({
      model: "m",
      max_tokens: 10,
      system: "sys",
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: "hello" },
        { role: "user", content: [{ type: "text", text: "again" }] },
      ],
    });
    expect(chat.messages).toEqual([
      { role: "system", content: "sys" },
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" },
      { role: "user", content: "again" },
    ]);
    expect(chat).not.toHaveProperty("tools");
    expect(chat).not.toHaveProperty("tool_choice");
  });

  it("gives a tool-only assistant turn null content and no trailing user message after tool results alone", () => {
    const chat = anthropicToChatRequest({
      max_tokens: 5,
      messages: [
        { role: "user", content: "go" },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: "one" }, { type: "text", text: "two" }] }] },
      ],
    });
    expect(chat.messages.slice(1)).toEqual([
      { role: "assistant", content: null, tool_calls: [{ id: "t1", type: "function", function: { name: "f", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "t1", content: "one\n\ntwo" },
    ]);
  });

  it("marks a failed tool result, since a chat tool message has no error flag", () => {
    const chat = anthropicToChatRequest({
      max_tokens: 5,
      messages: [
        { role: "user", content: [{ type: "tool_result", tool_use_id: "a", content: "no such file", is_error: true }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "b", is_error: true }] },
      ],
    });
    expect(chat.messages).toEqual([
      { role: "tool", tool_call_id: "a", content: "Error: no such file" },
      { role: "tool", tool_call_id: "b", content: "Error" },
    ]);
  });

  it("sends back the model's own unparseable arguments when the agent returns them", () => {
    const chat = anthropicToChatRequest({
      max_tokens: 5,
      messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t", name: "f", input: {}, edgegym_raw_arguments: '{"a": ' }] }],
    });
    expect(chat.messages[0]).toMatchObject({ tool_calls: [{ function: { arguments: '{"a": ' } }] });
  });

  it("maps url images and every tool_choice", () => {
    const image = anthropicToChatRequest({ max_tokens: 1, messages: [{ role: "user", content: [{ type: "image", source: { type: "url", url: "https://x/y.png" } }] }] });
    expect(image.messages[0]).toEqual({ role: "user", content: [{ type: "image_url", image_url: { url: "https://x/y.png" } }] });

    const tools = [{ name: "f", input_schema: { type: "object" } }];
    const choice = (tool_choice: unknown) => {
      const out = anthropicToChatRequest({ max_tokens: 1, messages: [], tools, tool_choice });
      return [out.tool_choice, out.parallel_tool_calls];
    };
    expect(choice({ type: "auto" })).toEqual(["auto", undefined]);
    expect(choice({ type: "any" })).toEqual(["required", undefined]);
    expect(choice({ type: "any", disable_parallel_tool_use: true })).toEqual(["required", false]);
    expect(choice({ type: "tool", name: "f" })).toEqual([{ type: "function", function: { name: "f" } }, undefined]);
    expect(choice({ type: "none" })).toEqual(["none", undefined]);
    expect(choice(undefined)).toEqual([undefined, undefined]);
  });

  it("drops an empty tools array, and tool_choice with it", () => {
    const chat = anthropicToChatRequest({ max_tokens: 1, messages: [], tools: [], tool_choice: { type: "any" } });
    expect(chat).toEqual({ max_tokens: 1, messages: [] });
  });

  it("refuses server tools, documents, file images, unknown roles and malformed bodies with a 400 that names the field", () => {
    const refused = (body: unknown): TranslationError => {
      try {
        anthropicToChatRequest(body);
      } catch (err) {
        if (err instanceof TranslationError) return err;
        throw err;
      }
      throw new Error("not refused");
    };
    const server = refused({ max_tokens: 1, messages: [], tools: [{ type: "web_search_20250305", name: "web_search" }] });
    expect(server.status).toBe(400);
    expect(server.message).toMatch(/^tools\[0\]: tool type "web_search_20250305"/);
    expect(refused({ max_tokens: 1, messages: [{ role: "user", content: [{ type: "document", source: {} }] }] }).message).toMatch(/^messages\[0\]\.content\[0\]: content block type "document"/);
    expect(refused({ max_tokens: 1, messages: [{ role: "user", content: [{ type: "image", source: { type: "file", file_id: "f" } }] }] }).message).toMatch(/Files API/);
    expect(refused({ max_tokens: 1, messages: [{ role: "system", content: "x" }] }).message).toMatch(/messages\[0\]\.role/);
    expect(refused({ max_tokens: 1 }).message).toBe("messages must be an array");
    expect(refused("nope").message).toBe("the request body must be an object");
    expect(refused({ max_tokens: "many", messages: [] }).message).toBe("max_tokens must be a number");
    expect(refused({ max_tokens: 1, messages: [], tools: [{ name: "f", input_schema: {} }], tool_choice: { type: "maybe" } }).message).toMatch(/tool_choice\.type/);
  });
});
