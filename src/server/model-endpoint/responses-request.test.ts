import { describe, expect, it } from "vitest";
import { responsesToChatRequest } from "./responses-request.js";
import { TranslationError } from "./translation-error.js";

function refused(body: unknown): TranslationError {
  try {
    responsesToChatRequest(body);
  } catch (err) {
    if (err instanceof TranslationError) return err;
    throw err;
  }
  throw new Error("not refused");
}

/** A Codex-style request: instructions, a developer message, history with reasoning, text + calls, and outputs. */
const codexRequest = {
  model: "gpt-5-codex",
  instructions: "You are Codex.",
  stream: true,
  store: false,
  include: ["reasoning.encrypted_content"],
  reasoning: { effort: "medium", summary: "auto" },
  prompt_cache_key: "k",
  parallel_tool_calls: false,
  tool_choice: "auto",
  tools: [{ type: "function", name: "shell", description: "Run a command", strict: false, parameters: { type: "object", properties: { command: { type: "array", items: { type: "string" } } } } }],
  input: [
    { type: "message", role: "developer", content: [{ type: "input_text", text: "sandbox: workspace-write" }] },
    { type: "message", role: "user", content: [{ type: "input_text", text: "<environment_context/>" }] },
    { role: "user", content: "List the files" },
    { type: "reasoning", id: "rs_1", summary: [], encrypted_content: null },
    { type: "message", role: "assistant", id: "msg_1", status: "completed", content: [{ type: "output_text", text: "Listing.", annotations: [] }] },
    { type: "function_call", id: "fc_1", call_id: "call_1", name: "shell", arguments: '{"command":["ls"]}' },
    { type: "function_call", id: "fc_2", call_id: "call_2", name: "shell", arguments: '{"command":["pwd"]}' },
    { type: "function_call_output", call_id: "call_1", output: "a\nb" },
    { type: "function_call_output", call_id: "call_2", output: "/w" },
    { type: "function_call", call_id: "call_3", name: "shell", arguments: "{}" },
    { type: "function_call_output", call_id: "call_3", output: [{ type: "input_text", text: "shot:" }, { type: "input_image", image_url: "data:image/png;base64,AA==", detail: "low" }] },
    { type: "message", role: "user", content: [{ type: "input_text", text: "thanks" }, { type: "input_image", image_url: "https://x/y.png" }] },
  ],
};

describe("responsesToChatRequest", () => {
  it("translates a Codex-style conversation: calls join the assistant text before them, outputs become tool messages", () => {
    expect(responsesToChatRequest(codexRequest)).toEqual({
      model: "gpt-5-codex",
      messages: [
        { role: "system", content: "You are Codex." },
        { role: "system", content: "sandbox: workspace-write" },
        { role: "user", content: "<environment_context/>" },
        { role: "user", content: "List the files" },
        {
          role: "assistant",
          content: "Listing.",
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "shell", arguments: '{"command":["ls"]}' } },
            { id: "call_2", type: "function", function: { name: "shell", arguments: '{"command":["pwd"]}' } },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: "a\nb" },
        { role: "tool", tool_call_id: "call_2", content: "/w" },
        { role: "assistant", content: null, tool_calls: [{ id: "call_3", type: "function", function: { name: "shell", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "call_3", content: "shot:" },
        // An image a tool returned cannot sit in a tool message; it follows right after.
        { role: "user", content: [{ type: "image_url", image_url: { url: "data:image/png;base64,AA==", detail: "low" } }] },
        {
          role: "user",
          content: [
            { type: "text", text: "thanks" },
            { type: "image_url", image_url: { url: "https://x/y.png" } },
          ],
        },
      ],
      tools: [
        {
          type: "function",
          function: { name: "shell", description: "Run a command", strict: false, parameters: { type: "object", properties: { command: { type: "array", items: { type: "string" } } } } },
        },
      ],
      tool_choice: "auto",
      parallel_tool_calls: false,
    });
  });

  it("takes a string input as one user message and maps the sampling fields", () => {
    expect(responsesToChatRequest({ model: "m", input: "hi", max_output_tokens: 256, temperature: 0.2, top_p: 0.9, metadata: { a: "b" }, user: "u", truncation: "auto" })).toEqual({
      model: "m",
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 256,
      temperature: 0.2,
      top_p: 0.9,
    });
  });

  it("merges consecutive function calls with no text before them into one assistant message", () => {
    const chat = responsesToChatRequest({
      input: [
        { type: "function_call", call_id: "a", name: "f", arguments: "{}" },
        { type: "reasoning", summary: [] },
        { type: "function_call", call_id: "b", name: "g", arguments: "{}" },
      ],
    });
    expect(chat.messages).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "a", type: "function", function: { name: "f", arguments: "{}" } },
          { id: "b", type: "function", function: { name: "g", arguments: "{}" } },
        ],
      },
    ]);
  });

  it("maps tool_choice and text.format", () => {
    const tools = [{ type: "function", name: "f", parameters: { type: "object" } }];
    expect(responsesToChatRequest({ input: "x", tools, tool_choice: "required" }).tool_choice).toBe("required");
    expect(responsesToChatRequest({ input: "x", tools, tool_choice: { type: "function", name: "f" } }).tool_choice).toEqual({ type: "function", function: { name: "f" } });
    // Without tools, Chat Completions refuses tool_choice: it is not sent.
    expect(responsesToChatRequest({ input: "x", tool_choice: "required" })).not.toHaveProperty("tool_choice");
    expect(responsesToChatRequest({ input: "x", text: { format: { type: "text" }, verbosity: "low" } })).not.toHaveProperty("response_format");
    expect(responsesToChatRequest({ input: "x", text: { format: { type: "json_object" } } }).response_format).toEqual({ type: "json_object" });
    expect(responsesToChatRequest({ input: "x", text: { format: { type: "json_schema", name: "s", schema: { type: "object" }, strict: true } } }).response_format).toEqual({
      type: "json_schema",
      json_schema: { name: "s", schema: { type: "object" }, strict: true },
    });
  });

  it("refuses previous_response_id, saying the endpoint keeps no conversation state", () => {
    const err = refused({ input: "x", previous_response_id: "resp_1" });
    expect(err.status).toBe(400);
    expect(err.message).toMatch(/previous_response_id is not supported: this model endpoint keeps no server-side conversation state/);
    expect(refused({ input: "x", conversation: "conv_1" }).message).toMatch(/^conversation is not supported/);
    expect(refused({ input: "x", background: true }).message).toMatch(/^background is not supported/);
    expect(refused({ input: [{ type: "item_reference", id: "msg_1" }] }).message).toMatch(/item_reference/);
    // null is how some SDKs send an unset field.
    expect(() => responsesToChatRequest({ input: "x", previous_response_id: null })).not.toThrow();
  });

  it("refuses hosted tools, file inputs and unknown items with a 400 that names the field", () => {
    expect(refused({ input: "x", tools: [{ type: "function", name: "f" }, { type: "web_search" }] }).message).toMatch(/^tools\[1\]: tool type "web_search" is not supported/);
    expect(refused({ input: "x", tools: [{ type: "custom", name: "apply_patch" }] }).message).toMatch(/tool type "custom"/);
    expect(refused({ input: [{ role: "user", content: [{ type: "input_file", file_id: "f" }] }] }).message).toMatch(/^input\[0\]\.content\[0\]: content type "input_file"/);
    expect(refused({ input: [{ role: "user", content: [{ type: "input_image", file_id: "f" }] }] }).message).toMatch(/Files API/);
    expect(refused({ input: [{ type: "local_shell_call", call_id: "c" }] }).message).toMatch(/^input\[0\]: item type "local_shell_call"/);
    expect(refused({ input: [{ type: "function_call", name: "f", arguments: "{}" }] }).message).toBe("input[0].call_id must be a string");
    expect(refused({ input: [{ role: "tool", content: "x" }] }).message).toMatch(/input\[0\]\.role/);
    expect(refused({ input: [{ role: "system", content: [{ type: "input_image", image_url: "u" }] }] }).message).toMatch(/only text/);
    expect(refused({ input: "x", tools: [{ type: "function", name: "f" }], tool_choice: { type: "file_search" } }).message).toMatch(/tool_choice "file_search"/);
    expect(refused({}).message).toBe("input must be an array");
  });
});
