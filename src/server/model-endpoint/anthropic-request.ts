import type { ChatAssistantMessage, ChatCompletionRequest, ChatContentPart, ChatFunctionTool, ChatImagePart, ChatMessage, ChatToolCall, ChatToolChoice } from "./chat-types.js";
import { RAW_ARGUMENTS_FIELD } from "./anthropic-response.js";
import { arrayAt, functionTool, objectAt, optionalBoolean, optionalNumber, optionalString, stringAt, type JsonObject } from "./request-fields.js";
import { TranslationError } from "./translation-error.js";

/**
 * Anthropic Messages request → Chat Completions request. Fields that only steer Anthropic's
 * own service (`metadata`, `thinking`, `top_k`, `service_tier`, `cache_control`, `stream`…)
 * are dropped: the upstream is a plain chat model and the endpoint decides streaming
 * itself. What has no chat equivalent and would change the conversation (server tools,
 * documents, files) is refused with a TranslationError rather than silently lost.
 */

/** Blocks of extended thinking: the upstream is not asked to think in Anthropic's format, so ones an agent sends back carry nothing it can use. */
const DROPPED_BLOCKS = new Set(["thinking", "redacted_thinking"]);

function imagePart(block: JsonObject, path: string): ChatImagePart {
  const source = objectAt(block.source, `${path}.source`);
  if (source.type === "base64") {
    const mediaType = stringAt(source.media_type, `${path}.source.media_type`);
    const data = stringAt(source.data, `${path}.source.data`);
    return { type: "image_url", image_url: { url: `data:${mediaType};base64,${data}` } };
  }
  if (source.type === "url") return { type: "image_url", image_url: { url: stringAt(source.url, `${path}.source.url`) } };
  throw new TranslationError(`${path}.source: image source type ${JSON.stringify(source.type)} is not supported (use base64 or url; the endpoint has no Files API)`);
}

function unsupportedBlock(block: JsonObject, path: string): TranslationError {
  return new TranslationError(`${path}: content block type ${JSON.stringify(block.type)} has no Chat Completions equivalent; this endpoint accepts text, image, tool_use and tool_result blocks`);
}

/** A user turn's content as chat parts: one string when it is only text, so text-only upstreams need not handle parts. */
function userContent(parts: ChatContentPart[]): string | ChatContentPart[] {
  const only = parts[0];
  return parts.length === 1 && only?.type === "text" ? only.text : parts;
}

/** A tool_result's text (joined) and images (which a chat tool message cannot hold: they follow in a user message). */
function toolResult(block: JsonObject, path: string): { message: ChatMessage; images: ChatImagePart[] } {
  const toolCallId = stringAt(block.tool_use_id, `${path}.tool_use_id`);
  const texts: string[] = [];
  const images: ChatImagePart[] = [];
  const content = block.content;
  if (typeof content === "string") texts.push(content);
  else if (content !== undefined && content !== null) {
    arrayAt(content, `${path}.content`).forEach((item, i) => {
      const itemPath = `${path}.content[${i}]`;
      const part = objectAt(item, itemPath);
      if (part.type === "text") texts.push(stringAt(part.text, `${itemPath}.text`));
      else if (part.type === "image") images.push(imagePart(part, itemPath));
      else throw unsupportedBlock(part, itemPath);
    });
  }
  let text = texts.join("\n\n");
  // Chat tool messages have no error flag; without one the model would read a failure as output.
  if (optionalBoolean(block.is_error, `${path}.is_error`) === true) text = text === "" ? "Error" : `Error: ${text}`;
  return { message: { role: "tool", tool_call_id: toolCallId, content: text }, images };
}

/** A user turn: its tool results first (chat requires them right after the assistant's calls), then what the user added. */
function userMessages(content: unknown, path: string): ChatMessage[] {
  if (typeof content === "string") return [{ role: "user", content }];
  const tools: ChatMessage[] = [];
  const parts: ChatContentPart[] = [];
  arrayAt(content, `${path}.content`).forEach((item, i) => {
    const blockPath = `${path}.content[${i}]`;
    const block = objectAt(item, blockPath);
    if (block.type === "text") parts.push({ type: "text", text: stringAt(block.text, `${blockPath}.text`) });
    else if (block.type === "image") parts.push(imagePart(block, blockPath));
    else if (block.type === "tool_result") {
      const result = toolResult(block, blockPath);
      tools.push(result.message);
      parts.push(...result.images);
    } else if (typeof block.type === "string" && DROPPED_BLOCKS.has(block.type)) return;
    else throw unsupportedBlock(block, blockPath);
  });
  return parts.length > 0 ? [...tools, { role: "user", content: userContent(parts) }] : tools;
}

function toolCall(block: JsonObject, path: string): ChatToolCall {
  const raw = block[RAW_ARGUMENTS_FIELD];
  // Our own answer kept the model's unparseable arguments: sending them back keeps the prompt what the model wrote.
  const args = typeof raw === "string" ? raw : JSON.stringify(objectAt(block.input ?? {}, `${path}.input`));
  return { id: stringAt(block.id, `${path}.id`), type: "function", function: { name: stringAt(block.name, `${path}.name`), arguments: args } };
}

function assistantMessage(content: unknown, path: string): ChatAssistantMessage {
  if (typeof content === "string") return { role: "assistant", content };
  const texts: string[] = [];
  const calls: ChatToolCall[] = [];
  arrayAt(content, `${path}.content`).forEach((item, i) => {
    const blockPath = `${path}.content[${i}]`;
    const block = objectAt(item, blockPath);
    if (block.type === "text") texts.push(stringAt(block.text, `${blockPath}.text`));
    else if (block.type === "tool_use") calls.push(toolCall(block, blockPath));
    else if (typeof block.type === "string" && DROPPED_BLOCKS.has(block.type)) return;
    else throw unsupportedBlock(block, blockPath);
  });
  const text = texts.join("\n\n");
  if (calls.length === 0) return { role: "assistant", content: text };
  return { role: "assistant", content: text === "" ? null : text, tool_calls: calls };
}

function systemText(system: unknown): string | undefined {
  if (system === undefined || system === null) return undefined;
  if (typeof system === "string") return system === "" ? undefined : system;
  const texts = arrayAt(system, "system").map((item, i) => {
    const block = objectAt(item, `system[${i}]`);
    if (block.type !== "text") throw new TranslationError(`system[${i}]: only text blocks are allowed in system`);
    return stringAt(block.text, `system[${i}].text`);
  });
  return texts.length > 0 ? texts.join("\n\n") : undefined;
}

function chatTool(item: unknown, path: string): ChatFunctionTool {
  const tool = objectAt(item, path);
  // A client tool has no type or "custom"; any other type is one of Anthropic's server or built-in tools.
  if (tool.type !== undefined && tool.type !== null && tool.type !== "custom") {
    throw new TranslationError(`${path}: tool type ${JSON.stringify(tool.type)} is an Anthropic server tool with no Chat Completions equivalent; define it as a client tool (name, description, input_schema)`);
  }
  return functionTool(tool, path, "input_schema");
}

function toolChoice(value: unknown): { tool_choice?: ChatToolChoice; parallel_tool_calls?: boolean } {
  if (value === undefined || value === null) return {};
  const choice = objectAt(value, "tool_choice");
  const parallel = optionalBoolean(choice.disable_parallel_tool_use, "tool_choice.disable_parallel_tool_use") === true ? { parallel_tool_calls: false } : {};
  switch (choice.type) {
    case "auto":
      return { tool_choice: "auto", ...parallel };
    case "any":
      return { tool_choice: "required", ...parallel };
    case "none":
      return { tool_choice: "none" };
    case "tool":
      return { tool_choice: { type: "function", function: { name: stringAt(choice.name, "tool_choice.name") } }, ...parallel };
    default:
      throw new TranslationError(`tool_choice.type must be auto, any, tool or none (got ${JSON.stringify(choice.type)})`);
  }
}

/**
 * The Chat Completions request for an Anthropic Messages request body.
 *
 * - `system` (a string or text blocks, joined by a blank line) → a leading system message;
 * - user turns → `tool` messages for their `tool_result` blocks, in order, then a user
 *   message with the rest (text, images, and any images the tool results held);
 * - assistant turns → one assistant message (text, `tool_use` → `tool_calls` with JSON
 *   arguments); thinking blocks are dropped;
 * - `tools` → function tools; `tool_choice` auto/any/tool/none → auto/required/named/none
 *   (`disable_parallel_tool_use` → `parallel_tool_calls: false`);
 * - `max_tokens`, `temperature`, `top_p` kept; `stop_sequences` → `stop`.
 *
 * @throws TranslationError (400) for a malformed body or content with no chat equivalent.
 * @example
 * const chat = anthropicToChatRequest({ model: "claude", max_tokens: 1024, messages: [{ role: "user", content: "hi" }] });
 * // { model: "claude", max_tokens: 1024, messages: [{ role: "user", content: "hi" }] }
 */
export function anthropicToChatRequest(body: unknown): ChatCompletionRequest {
  const request = objectAt(body, "the request body");
  const messages: ChatMessage[] = [];
  const system = systemText(request.system);
  if (system !== undefined) messages.push({ role: "system", content: system });
  arrayAt(request.messages, "messages").forEach((item, i) => {
    const path = `messages[${i}]`;
    const message = objectAt(item, path);
    if (message.role === "user") messages.push(...userMessages(message.content, path));
    else if (message.role === "assistant") messages.push(assistantMessage(message.content, path));
    else throw new TranslationError(`${path}.role must be user or assistant (got ${JSON.stringify(message.role)})`);
  });

  const out: ChatCompletionRequest = { messages };
  const model = optionalString(request.model, "model");
  if (model !== undefined) out.model = model;
  const maxTokens = optionalNumber(request.max_tokens, "max_tokens");
  if (maxTokens !== undefined) out.max_tokens = maxTokens;
  const temperature = optionalNumber(request.temperature, "temperature");
  if (temperature !== undefined) out.temperature = temperature;
  const topP = optionalNumber(request.top_p, "top_p");
  if (topP !== undefined) out.top_p = topP;
  if (request.stop_sequences !== undefined && request.stop_sequences !== null) {
    const stop = arrayAt(request.stop_sequences, "stop_sequences").map((s, i) => stringAt(s, `stop_sequences[${i}]`));
    if (stop.length > 0) out.stop = stop;
  }
  const tools = request.tools === undefined || request.tools === null ? [] : arrayAt(request.tools, "tools").map((t, i) => chatTool(t, `tools[${i}]`));
  // Chat Completions rejects an empty tools array, and tool_choice or parallel_tool_calls without tools.
  if (tools.length > 0) Object.assign(out, { tools }, toolChoice(request.tool_choice));
  return out;
}
