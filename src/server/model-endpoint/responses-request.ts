import type {
  ChatAssistantMessage,
  ChatCompletionRequest,
  ChatContentPart,
  ChatFunctionTool,
  ChatImagePart,
  ChatMessage,
  ChatResponseFormat,
  ChatToolChoice,
} from "./chat-types.js";
import { arrayAt, functionTool, objectAt, optionalBoolean, optionalNumber, optionalSchema, optionalString, stringAt, type JsonObject } from "./request-fields.js";
import { TranslationError } from "./translation-error.js";

/**
 * OpenAI Responses request → Chat Completions request. The endpoint is stateless: every
 * call must carry the whole conversation in `input`, so anything that points at state
 * OpenAI would have stored (`previous_response_id`, `conversation`, item references,
 * background runs, stored prompts) is refused, as are hosted tools the upstream cannot
 * run. Fields that only steer OpenAI's service (`store`, `include`, `reasoning`,
 * `prompt_cache_key`, `metadata`, `truncation`, `stream`…) are dropped.
 */

/** Refused fields, each with what the agent should do instead. */
const STATEFUL_FIELDS: Record<string, string> = {
  previous_response_id:
    "previous_response_id is not supported: this model endpoint keeps no server-side conversation state; send the whole conversation in `input` on every call (with store: false)",
  conversation: "conversation is not supported: this model endpoint keeps no server-side conversation state; send the whole conversation in `input` on every call",
  prompt: "prompt (a stored prompt template) is not supported: this model endpoint has no stored prompts; send instructions and input instead",
};

function imagePart(part: JsonObject, path: string): ChatImagePart {
  const url = optionalString(part.image_url, `${path}.image_url`);
  if (url === undefined) throw new TranslationError(`${path}: an input_image needs image_url (a URL or data URL); the endpoint has no Files API for file_id`);
  const detail = part.detail;
  return { type: "image_url", image_url: { url, ...(detail === "low" || detail === "high" || detail === "auto" ? { detail } : {}) } };
}

/** Content (a string or parts, at `path`) as chat parts; text parts of every kind read as text. */
function contentParts(content: unknown, path: string): ChatContentPart[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return arrayAt(content, path).map((item, i) => {
    const partPath = `${path}[${i}]`;
    const part = objectAt(item, partPath);
    switch (part.type) {
      case "input_text":
      case "output_text":
        return { type: "text", text: stringAt(part.text, `${partPath}.text`) };
      case "refusal":
        return { type: "text", text: stringAt(part.refusal, `${partPath}.refusal`) };
      case "input_image":
        return imagePart(part, partPath);
      default:
        throw new TranslationError(`${partPath}: content type ${JSON.stringify(part.type)} has no Chat Completions equivalent; use input_text or input_image`);
    }
  });
}

function textOnly(parts: ChatContentPart[], path: string): string {
  return parts
    .map((part) => {
      if (part.type !== "text") throw new TranslationError(`${path}: only text is allowed here`);
      return part.text;
    })
    .join("\n\n");
}

/** A function_call_output's text, and its images (a chat tool message holds text only: they follow in a user message). */
function toolOutput(output: unknown, path: string): { text: string; images: ChatImagePart[] } {
  if (typeof output === "string") return { text: output, images: [] };
  const parts = contentParts(output, path);
  return {
    text: parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n\n"),
    images: parts.flatMap((part) => (part.type === "image_url" ? [part] : [])),
  };
}

/**
 * The chat messages of `input` items. Function calls join the assistant message just
 * before them (a reasoning item in between does not count), because that is the one chat
 * turn the model produced: re-rendering it as two turns would show the model a prompt it
 * never wrote.
 */
function inputMessages(input: unknown[]): ChatMessage[] {
  const messages: ChatMessage[] = [];
  // The assistant message function calls may still join: reset by any other item.
  let open: ChatAssistantMessage | null = null;
  let images: ChatImagePart[] = [];
  const flushImages = (): void => {
    if (images.length > 0) messages.push({ role: "user", content: images });
    images = [];
  };

  input.forEach((value, i) => {
    const path = `input[${i}]`;
    const item = objectAt(value, path);
    const type = item.type ?? "message";
    if (type === "reasoning") return;
    if (type !== "function_call_output") flushImages();
    if (type === "message") {
      open = null;
      const parts = contentParts(item.content, `${path}.content`);
      switch (item.role) {
        case "user":
          messages.push({ role: "user", content: parts.length === 1 && parts[0]?.type === "text" ? parts[0].text : parts });
          return;
        // Chat templates of open models know system but rarely developer, which means the same to them.
        case "system":
        case "developer":
          messages.push({ role: "system", content: textOnly(parts, `${path}.content`) });
          return;
        case "assistant": {
          const message: ChatAssistantMessage = { role: "assistant", content: textOnly(parts, `${path}.content`) };
          messages.push(message);
          open = message;
          return;
        }
        default:
          throw new TranslationError(`${path}.role must be user, assistant, system or developer (got ${JSON.stringify(item.role)})`);
      }
    }
    if (type === "function_call") {
      const call = {
        id: stringAt(item.call_id, `${path}.call_id`),
        type: "function" as const,
        function: { name: stringAt(item.name, `${path}.name`), arguments: stringAt(item.arguments, `${path}.arguments`) },
      };
      const target: ChatAssistantMessage = open ?? { role: "assistant", content: null };
      if (!open) messages.push(target);
      if (target.content === "") target.content = null;
      target.tool_calls = [...(target.tool_calls ?? []), call];
      open = target;
      return;
    }
    if (type === "function_call_output") {
      open = null;
      const output = toolOutput(item.output, `${path}.output`);
      messages.push({ role: "tool", tool_call_id: stringAt(item.call_id, `${path}.call_id`), content: output.text });
      images.push(...output.images);
      return;
    }
    if (type === "item_reference") throw new TranslationError(`${path}: item_reference is not supported: this model endpoint keeps no stored items; send the item itself`);
    throw new TranslationError(`${path}: item type ${JSON.stringify(type)} has no Chat Completions equivalent; this endpoint accepts message, function_call, function_call_output and reasoning items`);
  });
  flushImages();
  return messages;
}

function chatTool(value: unknown, path: string): ChatFunctionTool {
  const tool = objectAt(value, path);
  if (tool.type !== "function") {
    throw new TranslationError(`${path}: tool type ${JSON.stringify(tool.type)} is not supported: the upstream is a Chat Completions model that can only call function tools`);
  }
  return functionTool(tool, path, "parameters");
}

function toolChoice(value: unknown): ChatToolChoice | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === "none" || value === "auto" || value === "required") return value;
  const choice = objectAt(value, "tool_choice");
  if (choice.type === "function") return { type: "function", function: { name: stringAt(choice.name, "tool_choice.name") } };
  throw new TranslationError(`tool_choice ${JSON.stringify(choice.type ?? value)} is not supported: use none, auto, required or {"type": "function", "name": …}`);
}

/** `text.format` → `response_format` (structured output carries over; plain text needs nothing). */
function responseFormat(text: unknown): ChatResponseFormat | undefined {
  if (text === undefined || text === null) return undefined;
  const format = objectAt(text, "text").format;
  if (format === undefined || format === null) return undefined;
  const f = objectAt(format, "text.format");
  if (f.type === "text") return undefined;
  if (f.type === "json_object") return { type: "json_object" };
  if (f.type === "json_schema") {
    const description = optionalString(f.description, "text.format.description");
    const schema = optionalSchema(f.schema, "text.format.schema");
    const strict = optionalBoolean(f.strict, "text.format.strict");
    return {
      type: "json_schema",
      json_schema: {
        name: stringAt(f.name, "text.format.name"),
        ...(schema !== undefined ? { schema } : {}),
        ...(description !== undefined ? { description } : {}),
        ...(strict !== undefined ? { strict } : {}),
      },
    };
  }
  throw new TranslationError(`text.format.type must be text, json_object or json_schema (got ${JSON.stringify(f.type)})`);
}

/**
 * The Chat Completions request for an OpenAI Responses request body.
 *
 * - `instructions` → a leading system message; `input` as a string → one user message;
 * - message items (content a string or input_text / output_text / input_image parts;
 *   role developer → system), `function_call` items → assistant `tool_calls` (joining the
 *   assistant message or calls just before), `function_call_output` → `tool` messages
 *   (images in an output follow in a user message); `reasoning` items are dropped;
 * - function `tools` (flat: name, description, parameters, strict) → chat tools;
 *   `tool_choice`, `parallel_tool_calls`, `temperature`, `top_p` kept;
 *   `max_output_tokens` → `max_tokens`; `text.format` → `response_format`.
 *
 * @throws TranslationError (400) for `previous_response_id`, `conversation`, `prompt`,
 *   `background: true`, item references, non-function tools, file inputs, or a malformed body.
 * @example
 * responsesToChatRequest({ model: "gpt-5", instructions: "Be brief.", input: "hi" })
 * // { model: "gpt-5", messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "hi" }] }
 */
export function responsesToChatRequest(body: unknown): ChatCompletionRequest {
  const request = objectAt(body, "the request body");
  for (const [field, message] of Object.entries(STATEFUL_FIELDS)) {
    if (request[field] !== undefined && request[field] !== null) throw new TranslationError(message);
  }
  if (optionalBoolean(request.background, "background") === true) {
    throw new TranslationError("background is not supported: this model endpoint answers each call while the agent waits; leave background unset");
  }

  const messages: ChatMessage[] = [];
  const instructions = optionalString(request.instructions, "instructions");
  if (instructions !== undefined && instructions !== "") messages.push({ role: "system", content: instructions });
  if (typeof request.input === "string") messages.push({ role: "user", content: request.input });
  else messages.push(...inputMessages(arrayAt(request.input, "input")));

  const out: ChatCompletionRequest = { messages };
  const model = optionalString(request.model, "model");
  if (model !== undefined) out.model = model;
  const maxTokens = optionalNumber(request.max_output_tokens, "max_output_tokens");
  if (maxTokens !== undefined) out.max_tokens = maxTokens;
  const temperature = optionalNumber(request.temperature, "temperature");
  if (temperature !== undefined) out.temperature = temperature;
  const topP = optionalNumber(request.top_p, "top_p");
  if (topP !== undefined) out.top_p = topP;
  const format = responseFormat(request.text);
  if (format !== undefined) out.response_format = format;

  const tools = request.tools === undefined || request.tools === null ? [] : arrayAt(request.tools, "tools").map((t, i) => chatTool(t, `tools[${i}]`));
  // Chat Completions rejects an empty tools array, and tool_choice or parallel_tool_calls without tools.
  if (tools.length > 0) {
    out.tools = tools;
    const choice = toolChoice(request.tool_choice);
    if (choice !== undefined) out.tool_choice = choice;
    const parallel = optionalBoolean(request.parallel_tool_calls, "parallel_tool_calls");
    if (parallel !== undefined) out.parallel_tool_calls = parallel;
  }
  return out;
}
