import type OpenAI from "openai";
import { importOpenAI, openaiIfImported } from "../envs/openai-module.js";
import type { AssistantMessage, ToolCall } from "../protocol/index.js";
import { EvalError, retryAfterMs } from "./errors.js";
import type { ChatModel, ChatRequest, ChatResult } from "./model.js";

export interface OpenAIModelOptions {
  model: string;
  /** e.g. `http://127.0.0.1:8000/v1`, `https://api.openai.com/v1`. */
  baseUrl: string;
  /** Local servers take any key; "EMPTY" is sent when none is given. */
  apiKey?: string | undefined;
  /** Per request. */
  timeoutMs: number;
}

/**
 * The causes under a failed connection, outermost first, without the generic wrappers
 * ("Connection error.", "fetch failed") that say nothing: e.g. "connect ECONNREFUSED
 * 127.0.0.1:8000" or "getaddrinfo ENOTFOUND example.invalid". Bounded: cause chains are data.
 */
export function connectionCause(err: unknown): string {
  const parts: string[] = [];
  let current: unknown = err;
  for (let depth = 0; depth < 8 && current instanceof Error; depth++) {
    const message = current.message.trim();
    const code = (current as { code?: unknown }).code;
    if (message && !/^(connection error\.?|fetch failed)$/i.test(message)) parts.push(typeof code === "string" && !message.includes(code) ? `${message} (${code})` : message);
    current = current.cause;
  }
  return parts.join(": ") || (err instanceof Error ? err.message : String(err));
}

/** "cannot reach the model endpoint URL: cause", so a wrong port or host shows at once. */
export function connectionError(err: unknown, baseUrl?: string): EvalError {
  return new EvalError("model_connection_error", `cannot reach the model endpoint${baseUrl ? ` ${baseUrl}` : ""}: ${connectionCause(err)}`, true);
}

/** Maps what the openai client throws to an EvalError that says whether a retry may help. */
export function classifyModelError(err: unknown): EvalError {
  if (err instanceof EvalError) return err;
  // The openai package is imported with the first request (OpenAIChatModel); before that none of its errors exists.
  const openai = openaiIfImported();
  if (openai) {
    const { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } = openai;
    if (err instanceof APIUserAbortError) return new EvalError("aborted", "aborted", false);
    if (err instanceof APIConnectionTimeoutError) return new EvalError("model_timeout", `model request timed out: ${err.message}`, true);
    if (err instanceof APIConnectionError) return connectionError(err);
    if (err instanceof APIError) {
      const status = err.status ?? 0;
      const text = `model endpoint answered ${status}: ${err.message}`;
      const after = retryAfterMs(err.headers ?? undefined);
      if (status === 429) return new EvalError("model_rate_limited", text, true, after);
      if (status === 408 || status === 409) return new EvalError("model_timeout", text, true, after);
      if (status >= 500) return new EvalError("model_server_error", text, true, after);
      if (status === 401 || status === 403) return new EvalError("model_auth_error", text, false);
      return new EvalError("model_bad_request", text, false);
    }
  }
  if (err instanceof Error && err.name === "AbortError") return new EvalError("aborted", "aborted", false);
  return new EvalError("model_bad_response", err instanceof Error ? err.message : String(err), false);
}

type WireToolCall = { id: string; type: string; function?: { name: string; arguments: string } };

/** The assistant message as our protocol holds it: OpenAI's shape minus fields the wire does not carry. */
export function toAssistantMessage(raw: { content?: string | null; tool_calls?: WireToolCall[] | null; reasoning_content?: unknown; reasoning?: unknown }): AssistantMessage {
  const calls: ToolCall[] = (raw.tool_calls ?? [])
    .filter((c): c is WireToolCall & { function: { name: string; arguments: string } } => c.type === "function" && !!c.function)
    .map((c) => ({ id: c.id, type: "function", function: { name: c.function.name, arguments: c.function.arguments ?? "" } }));
  const message: AssistantMessage = { role: "assistant", content: raw.content ?? (calls.length ? null : "") };
  if (calls.length) message.tool_calls = calls;
  const reasoning = typeof raw.reasoning_content === "string" ? raw.reasoning_content : typeof raw.reasoning === "string" ? raw.reasoning : undefined;
  if (reasoning) message.reasoning_content = reasoning;
  return message;
}

/**
 * A ChatModel over any OpenAI-compatible endpoint (OpenAI, vLLM, llama.cpp, a proxy),
 * through the official `openai` client. Its own retries are off: the evaluator retries,
 * so it can count attempts and give up where it was told to.
 */
export class OpenAIChatModel implements ChatModel {
  readonly model: string;
  readonly baseUrl: string;
  private readonly options: OpenAIModelOptions;
  private client: OpenAI | undefined;

  constructor(options: OpenAIModelOptions) {
    this.model = options.model;
    this.baseUrl = options.baseUrl;
    this.options = options;
  }

  /** The client, made on the first request: the openai package is imported then, not at start-up. */
  private async openClient(): Promise<OpenAI> {
    if (!this.client) {
      const { default: Client } = await importOpenAI();
      const { apiKey, baseUrl, timeoutMs } = this.options;
      this.client ??= new Client({ apiKey: apiKey || "EMPTY", baseURL: baseUrl, maxRetries: 0, timeout: timeoutMs });
    }
    return this.client;
  }

  async complete(request: ChatRequest, signal: AbortSignal): Promise<ChatResult> {
    const body = {
      ...request.sampling,
      model: this.model,
      messages: request.messages,
      ...(request.tools.length ? { tools: request.tools } : {}),
      stream: false,
    } as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;
    const client = await this.openClient();
    let completion: OpenAI.Chat.ChatCompletion;
    try {
      completion = await client.chat.completions.create(body, { signal });
    } catch (err) {
      // Named here, where the URL is known; a timeout keeps its own code.
      const openai = openaiIfImported();
      if (openai && err instanceof openai.APIConnectionError && !(err instanceof openai.APIConnectionTimeoutError)) throw connectionError(err, this.baseUrl);
      throw err;
    }
    const choice = completion.choices?.[0];
    if (!choice?.message) throw new EvalError("model_bad_response", "the model endpoint returned no choices", false);
    return {
      message: toAssistantMessage(choice.message as Parameters<typeof toAssistantMessage>[0]),
      finishReason: choice.finish_reason ?? "unknown",
      usage: completion.usage ? { inputTokens: completion.usage.prompt_tokens ?? 0, outputTokens: completion.usage.completion_tokens ?? 0 } : null,
    };
  }
}
