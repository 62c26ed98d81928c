import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { readBody } from "./scripted-model.js";

/**
 * A scripted OpenAI-compatible upstream for tests of the per-episode model endpoint: a real
 * `node:http` server whose `POST /v1/chat/completions` answers the next reply of a fixed script,
 * so a harness (mini-swe-agent, the `openai` client, edgegym's forwarder) can be driven without
 * a model. Unlike `scripted-model.ts` (a policy function per call), this one is a plain list and
 * keeps the exact bodies it answered, for byte-level comparisons of what was forwarded.
 *
 * Answers:
 * - `POST /v1/chat/completions`: the next reply as a `chat.completion` (or, with `stream: true`, as
 *   `chat.completion.chunk` server-sent events ending in `data: [DONE]`); once the script is used
 *   up, HTTP 500 with an OpenAI error body (`type: "script_exhausted"`).
 * - `GET /v1/models`: one model, `scripted`.
 * - anything else: 404 with an OpenAI error body.
 *
 * Token ids (a test double's made-up ids, not any real tokenizer's): with `return_token_ids: true`
 * or `logprobs: true` in the request, the answer carries vLLM's fields — `prompt_token_ids`,
 * `choices[0].token_ids` and `choices[0].logprobs.content` (one entry per token). A token is one
 * UTF-8 byte (id = the byte's value, 0-255) of a toy chat template:
 * `<|role|>` + text + `<|end|>` per message (an assistant's tool calls rendered after its content as
 * `<tool_call>{"name":…,"arguments":…}</tool_call>`; tools, when given, as a first `<|tools|>` block),
 * then `<|assistant|>` as the generation prompt; the completion's tokens are the reply rendered the
 * same way plus `<|end|>`. So the ids are deterministic, and when a caller sends the assistant
 * message back as it was received, the next call's `prompt_token_ids` start with the previous
 * call's `prompt_token_ids` + `token_ids` (as a real chat template usually gives). Logprobs are
 * made up too (`-(byte % 10 + 1) / 100`), always finite and <= 0.
 */

/** One function call of a scripted reply; `arguments` as an object is sent JSON-encoded. */
export interface ScriptedToolCall {
  id?: string;
  type?: "function";
  function: { name: string; arguments: string | Record<string, unknown> };
}

/** One scripted reply: an assistant message (content and/or tool calls). */
export interface ScriptedAssistantReply {
  content?: string | null;
  tool_calls?: ScriptedToolCall[];
  /** Default "tool_calls" when there are tool calls, else "stop". */
  finish_reason?: string;
}

export interface ScriptedUpstreamOptions {
  replies: ScriptedAssistantReply[];
  /** Address to listen on (default 127.0.0.1); "0.0.0.0" or a docker bridge gateway for containers. */
  host?: string;
  /** Port (default 0: any free one). */
  port?: number;
}

/** A chat-completions request as received. */
export interface ReceivedRequest {
  body: unknown;
  headers: IncomingHttpHeaders;
}

export interface ScriptedUpstream {
  /** Base URL ending in /v1 (at 127.0.0.1 when listening on a wildcard address). */
  url: string;
  port: number;
  /** The base URL at another address of this machine (e.g. the docker gateway `172.17.0.1`). */
  urlAt(host: string): string;
  /** Every POST /v1/chat/completions, in order (also those answered with an error). */
  received: ReceivedRequest[];
  /**
   * The exact JSON bodies of the completions it answered, in order (errors excluded, so
   * `answered[i]` is reply i). For a streamed answer: the `chat.completion` the chunks add up to.
   */
  answered: unknown[];
  close(): Promise<void>;
}

interface ChatRequest {
  model?: unknown;
  messages?: unknown;
  tools?: unknown;
  stream?: unknown;
  stream_options?: { include_usage?: unknown } | null;
  logprobs?: unknown;
  return_token_ids?: unknown;
}

interface ToolCallOut {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

const END = "<|end|>";

/** The text of a message's content: a string, or the text parts of a content array. */
function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((part) => (part && typeof part === "object" && typeof (part as { text?: unknown }).text === "string" ? (part as { text: string }).text : "")).join("");
  }
  return "";
}

/** An assistant turn as the toy template renders it: content, then each tool call. */
function renderAssistant(content: unknown, toolCalls: unknown): string {
  let text = contentText(content);
  if (Array.isArray(toolCalls)) {
    for (const call of toolCalls as { function?: { name?: unknown; arguments?: unknown } }[]) {
      text += `<tool_call>${JSON.stringify({ name: call?.function?.name ?? null, arguments: call?.function?.arguments ?? null })}</tool_call>`;
    }
  }
  return text;
}

/** The toy chat template's rendering of a request, ending in the generation prompt. */
function renderPrompt(request: ChatRequest): string {
  let text = Array.isArray(request.tools) && request.tools.length > 0 ? `<|tools|>${JSON.stringify(request.tools)}${END}` : "";
  for (const raw of Array.isArray(request.messages) ? request.messages : []) {
    const message = (raw ?? {}) as { role?: unknown; content?: unknown; tool_calls?: unknown };
    const role = typeof message.role === "string" ? message.role : "user";
    text += `<|${role}|>${role === "assistant" ? renderAssistant(message.content, message.tool_calls) : contentText(message.content)}${END}`;
  }
  return `${text}<|assistant|>`;
}

/** Made-up token ids: one per UTF-8 byte. */
const tokenIds = (text: string): number[] => Array.from(Buffer.from(text, "utf8"));
const fakeLogprob = (id: number): number => -((id % 10) + 1) / 100;

function logprobsContent(ids: number[]): { token: string; logprob: number; bytes: number[]; top_logprobs: [] }[] {
  // A token that is one byte of a multi-byte character is not valid text on its own; vLLM writes
  // such tokens as "bytes:\xNN", and so does this double.
  return ids.map((id) => ({ token: id < 0x80 ? String.fromCharCode(id) : `bytes:\\x${id.toString(16).padStart(2, "0")}`, logprob: fakeLogprob(id), bytes: [id], top_logprobs: [] }));
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

const errorBody = (message: string, type: string, code: string | null = null) => ({ error: { message, type, param: null, code } });

/**
 * Starts the scripted upstream.
 *
 * @example
 * const upstream = await startScriptedUpstream({ replies: [{ content: "hi" }] });
 * const client = new OpenAI({ baseURL: upstream.url, apiKey: "x" });
 */
export async function startScriptedUpstream(options: ScriptedUpstreamOptions): Promise<ScriptedUpstream> {
  const replies = options.replies;
  const received: ReceivedRequest[] = [];
  const answered: unknown[] = [];
  let next = 0;
  let toolCallCounter = 0;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? "/").split("?")[0]?.replace(/\/+$/, "") ?? "";
    if (req.method === "GET" && path === "/v1/models") {
      sendJson(res, 200, { object: "list", data: [{ id: "scripted", object: "model", created: 0, owned_by: "edgegym-test" }] });
      return;
    }
    if (req.method !== "POST" || path !== "/v1/chat/completions") {
      sendJson(res, 404, errorBody(`no route ${req.method} ${req.url}`, "invalid_request_error", "not_found"));
      return;
    }
    const raw = await readBody(req);
    let body: ChatRequest;
    try {
      body = JSON.parse(raw) as ChatRequest;
    } catch {
      received.push({ body: raw, headers: req.headers });
      sendJson(res, 400, errorBody("request body is not JSON", "invalid_request_error"));
      return;
    }
    received.push({ body, headers: req.headers });
    if (!body || typeof body !== "object" || !Array.isArray(body.messages)) {
      sendJson(res, 400, errorBody("messages: expected an array", "invalid_request_error"));
      return;
    }
    const reply = replies[next];
    if (!reply) {
      sendJson(res, 500, errorBody(`scripted upstream: script exhausted (${replies.length} replies, this is call ${received.length})`, "script_exhausted", "script_exhausted"));
      return;
    }
    const call = ++next;
    const toolCalls: ToolCallOut[] | undefined = reply.tool_calls?.map((tc) => ({
      id: tc.id ?? `call_${++toolCallCounter}`,
      type: "function",
      function: { name: tc.function.name, arguments: typeof tc.function.arguments === "string" ? tc.function.arguments : JSON.stringify(tc.function.arguments) },
    }));
    const content = reply.content === undefined ? (toolCalls ? null : "") : reply.content;
    const message = { role: "assistant" as const, content, ...(toolCalls ? { tool_calls: toolCalls } : {}) };
    const finishReason = reply.finish_reason ?? (toolCalls ? "tool_calls" : "stop");

    const promptIds = tokenIds(renderPrompt(body));
    const completionIds = tokenIds(renderAssistant(content, toolCalls) + END);
    const usage = { prompt_tokens: promptIds.length, completion_tokens: completionIds.length, total_tokens: promptIds.length + completionIds.length };
    const wantIds = body.return_token_ids === true;
    const wantLogprobs = body.logprobs === true;
    const model = typeof body.model === "string" ? body.model : "scripted";
    const id = `chatcmpl-scripted-${call}`;
    const created = Math.floor(Date.now() / 1000);

    const completion = {
      id,
      object: "chat.completion",
      created,
      model,
      choices: [
        {
          index: 0,
          message,
          logprobs: wantLogprobs || wantIds ? { content: logprobsContent(completionIds) } : null,
          finish_reason: finishReason,
          ...(wantIds || wantLogprobs ? { token_ids: completionIds } : {}),
        },
      ],
      usage,
      ...(wantIds || wantLogprobs ? { prompt_token_ids: promptIds } : {}),
    };
    answered.push(completion);

    if (body.stream !== true) {
      sendJson(res, 200, completion);
      return;
    }
    // Streamed: role, then content, then one chunk per tool call, then the finish reason (and
    // usage when asked for with stream_options.include_usage), then [DONE].
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    const base = { id, object: "chat.completion.chunk", created, model };
    const send = (chunk: unknown): void => {
      res.write(`data: ${JSON.stringify(chunk)}\n\n`);
    };
    const choice = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ index: 0, delta, logprobs: null, finish_reason: null, ...extra });
    send({ ...base, choices: [choice({ role: "assistant", content: "" })], ...(wantIds || wantLogprobs ? { prompt_token_ids: promptIds } : {}) });
    if (content) send({ ...base, choices: [choice({ content })] });
    toolCalls?.forEach((tc, index) => send({ ...base, choices: [choice({ tool_calls: [{ index, ...tc }] })] }));
    send({
      ...base,
      choices: [
        choice({}, {
          finish_reason: finishReason,
          ...(wantIds || wantLogprobs ? { token_ids: completionIds, logprobs: { content: logprobsContent(completionIds) } } : {}),
        }),
      ],
    });
    if (body.stream_options?.include_usage === true) send({ ...base, choices: [], usage });
    res.end("data: [DONE]\n\n");
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, errorBody(String(err), "server_error"));
      else res.end();
    });
  });
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const urlAt = (at: string): string => `http://${at.includes(":") ? `[${at}]` : at}:${port}/v1`;
  const wildcard = host === "0.0.0.0" || host === "::" || host === "";
  return {
    url: urlAt(wildcard ? "127.0.0.1" : host),
    port,
    urlAt,
    received,
    answered,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
