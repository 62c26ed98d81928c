/**
 * The OpenAI Chat Completions shapes the model endpoint speaks to its upstream, and only
 * the fields it writes or reads. Requests are what the translators build, so they are
 * exact; completions come from an upstream we do not control, so every field is optional
 * and extra fields (vLLM's, a provider's) ride along under the index signatures.
 *
 * `type` aliases rather than interfaces throughout: an alias is assignable to
 * `Record<string, unknown>`, which is how the endpoint passes bodies around.
 */

/** A text part of a message's content. */
export type ChatTextPart = { type: "text"; text: string };
/** An image part: an http(s) URL or a `data:` URL carrying base64 bytes. */
export type ChatImagePart = { type: "image_url"; image_url: { url: string; detail?: "auto" | "low" | "high" } };
export type ChatContentPart = ChatTextPart | ChatImagePart;

export type ChatToolCall = { id: string; type: "function"; function: { name: string; arguments: string } };

export type ChatSystemMessage = { role: "system"; content: string };
export type ChatUserMessage = { role: "user"; content: string | ChatContentPart[] };
/** `content` is null when the turn is only tool calls (what OpenAI itself returns). */
export type ChatAssistantMessage = { role: "assistant"; content: string | null; tool_calls?: ChatToolCall[] };
/** A tool's answer; the chat wire has no error flag, so a failed call says so in its text. */
export type ChatToolMessage = { role: "tool"; tool_call_id: string; content: string };
export type ChatMessage = ChatSystemMessage | ChatUserMessage | ChatAssistantMessage | ChatToolMessage;

export type ChatFunctionTool = {
  type: "function";
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
};

export type ChatToolChoice = "none" | "auto" | "required" | { type: "function"; function: { name: string } };

export type ChatResponseFormat =
  | { type: "text" }
  | { type: "json_object" }
  | { type: "json_schema"; json_schema: { name: string; schema?: Record<string, unknown>; description?: string; strict?: boolean } };

/** The request a translator builds for the upstream (always non-streamed; the endpoint sets the model). */
export type ChatCompletionRequest = {
  model?: string;
  messages: ChatMessage[];
  tools?: ChatFunctionTool[];
  tool_choice?: ChatToolChoice;
  parallel_tool_calls?: boolean;
  max_tokens?: number;
  temperature?: number;
  top_p?: number;
  stop?: string[];
  response_format?: ChatResponseFormat;
};

/** One sampled token's log probability (`top_logprobs` only when the request asked for them). */
export type ChatTokenLogprob = {
  token?: string;
  logprob: number;
  bytes?: number[] | null;
  top_logprobs?: { token: string; logprob: number; bytes?: number[] | null }[];
  [key: string]: unknown;
};

export type ChatLogprobs = { content?: ChatTokenLogprob[] | null; [key: string]: unknown };

/** A tool call as an upstream returns it (some servers omit `type`). */
export type ChatToolCallReceived = { id: string; type?: string; function: { name: string; arguments: string } };

export type ChatCompletionMessage = {
  role?: string;
  content?: string | null;
  refusal?: string | null;
  tool_calls?: ChatToolCallReceived[] | null;
  /** Reasoning split off by a vLLM reasoning parser (older vLLM names it `reasoning_content`). */
  reasoning?: string | null;
  reasoning_content?: string | null;
  [key: string]: unknown;
};

export type ChatFinishReason = "stop" | "length" | "tool_calls" | "content_filter" | "function_call";

export type ChatCompletionChoice = {
  index?: number;
  message?: ChatCompletionMessage;
  /** A {@link ChatFinishReason}, or whatever an upstream invents (the translators treat an unknown one as `stop`). */
  finish_reason?: string | null;
  logprobs?: ChatLogprobs | null;
  /** vLLM: the matched stop string, or the stop token id, when `finish_reason` is `stop`. */
  stop_reason?: string | number | null;
  /** vLLM, with `return_token_ids: true`: the sampled token ids of this choice. */
  token_ids?: number[] | null;
  [key: string]: unknown;
};

export type ChatUsage = {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number | null; [key: string]: unknown } | null;
  completion_tokens_details?: { reasoning_tokens?: number | null; [key: string]: unknown } | null;
  [key: string]: unknown;
};

/** A non-streamed completion as received from the upstream. */
export type ChatCompletion = {
  id?: string;
  object?: string;
  created?: number;
  model?: string;
  system_fingerprint?: string | null;
  choices?: ChatCompletionChoice[];
  usage?: ChatUsage | null;
  /** vLLM, with `return_token_ids: true`: the prompt as the model saw it, in token ids. */
  prompt_token_ids?: number[] | null;
  [key: string]: unknown;
};

/** A tool call fragment of a stream: the first names it, the rest append to `arguments`. */
export type ChatToolCallDelta = {
  index: number;
  id?: string;
  type?: "function";
  function?: { name?: string; arguments?: string };
};

export type ChatDelta = {
  role?: "assistant";
  content?: string | null;
  refusal?: string | null;
  reasoning?: string;
  reasoning_content?: string;
  tool_calls?: ChatToolCallDelta[];
  [key: string]: unknown;
};

export type ChatChunkChoice = {
  index: number;
  delta: ChatDelta;
  finish_reason: string | null;
  logprobs?: ChatLogprobs | null;
  stop_reason?: string | number | null;
  token_ids?: number[] | null;
  [key: string]: unknown;
};

/** One `chat.completion.chunk` of a stream. */
export type ChatCompletionChunk = {
  id: string;
  object: "chat.completion.chunk";
  created: number;
  model: string;
  system_fingerprint?: string | null;
  choices: ChatChunkChoice[];
  usage?: ChatUsage | null;
  prompt_token_ids?: number[] | null;
  [key: string]: unknown;
};
