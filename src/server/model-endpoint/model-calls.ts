import { AssistantMessage, type ModelCall, type SampledTokens, type StepResponse } from "../../protocol/index.js";
import { AgentState } from "../../envs/sandbox/agent-state.js";
import type { EpisodeStorage } from "../db/stores.js";
import type { StepRow } from "../db/episode-store.js";
import type { ServerConfig } from "../context.js";
import { isoTime } from "../episodes/iso-time.js";
import { utf8Length } from "../tenants/quotas.js";
import { episodeKeyHash, sameHash } from "./episode-key.js";
import { TranslationError } from "./translation-error.js";
import type { ChatCompletion, WireAdapter } from "./wire.js";
import type { ModelUpstream } from "./upstreams.js";

/** What the endpoint answers the agent: a JSON body or stream events, in the wire's own format. */
export type EndpointAnswer =
  | { kind: "json"; status: number; body: unknown; headers?: Record<string, string> }
  | { kind: "sse"; status: 200; events: string[] };

/**
 * One POST to an upstream: its status and body text. A rejection is a transport failure;
 * one with `timedOut` set means the call's limit passed. Fetch everywhere by default; Node
 * passes node:http with keep-alive (src/server/node/upstream-post.ts), which costs less.
 */
export type UpstreamPost = (url: string, headers: Record<string, string>, body: string, timeoutMs: number) => Promise<{ status: number; text: string }>;

/** The default: fetch, with the call's limit as an abort. */
export const fetchUpstreamPost: UpstreamPost = async (url, headers, body, timeoutMs) => {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const res = await fetch(url, { method: "POST", headers, body, signal: controller.signal });
    return { status: res.status, text: await res.text() };
  } catch (err) {
    if (controller.signal.aborted) throw Object.assign(new Error(`the upstream took over ${timeoutMs / 1000} s`), { timedOut: true });
    throw err;
  } finally {
    clearTimeout(timer);
  }
};

/** How a call that the episode's state no longer allows ends the episode. */
type Limit = "call_limit" | "token_limit";

const MAX_COMMIT_ATTEMPTS = 50;

/** Fields edgegym adds to a vLLM upstream's request; removed from the reply unless the agent asked for them. */
const TOKEN_FIELDS = ["prompt_token_ids", "prompt_text", "prompt_logprobs", "kv_transfer_params"] as const;

function agentOf(row: StepRow): AgentState | null {
  const parsed = AgentState.safeParse((row.state as { agent?: unknown } | null)?.agent);
  return parsed.success ? parsed.data : null;
}

/** The assistant message a chat completion carries, in the transcript's form (a failed call: an empty one). */
function transcriptMessage(chat: ChatCompletion | null): AssistantMessage {
  const message = chat?.choices?.[0]?.message;
  if (!message) return { role: "assistant", content: "" };
  const candidate = {
    role: "assistant" as const,
    content: message.content ?? null,
    ...(message.tool_calls?.length
      ? { tool_calls: message.tool_calls.map((c) => ({ id: c.id, type: "function" as const, function: { name: c.function.name, arguments: c.function.arguments } })) }
      : {}),
    ...(typeof message.reasoning_content === "string" ? { reasoning_content: message.reasoning_content } : {}),
  };
  const parsed = AssistantMessage.safeParse(candidate);
  return parsed.success ? parsed.data : { role: "assistant", content: typeof message.content === "string" ? message.content : "" };
}

/** The tokens a vLLM upstream returned for the first choice (ids as sampled, one logprob per id when it sent them). */
function sampledOf(chat: ChatCompletion | null): SampledTokens | null {
  const choice = chat?.choices?.[0];
  const ids = choice?.token_ids;
  if (!Array.isArray(ids)) return null;
  const logprobs = choice?.logprobs?.content?.map((entry) => entry.logprob);
  return {
    token_ids: ids,
    ...(logprobs && logprobs.length === ids.length ? { logprobs } : {}),
    ...(Array.isArray(chat?.prompt_token_ids) ? { prompt_token_ids: chat.prompt_token_ids } : {}),
  };
}

/** The reply without what edgegym asked a vLLM upstream for and the agent did not. */
function asAgentAsked(chat: ChatCompletion, request: Record<string, unknown>): ChatCompletion {
  const out: Record<string, unknown> = { ...chat };
  if (request.return_token_ids !== true) for (const field of TOKEN_FIELDS) delete out[field];
  out.choices = (chat.choices ?? []).map((choice) => {
    const c: Record<string, unknown> = { ...choice };
    if (request.return_token_ids !== true) delete c.token_ids;
    if (request.logprobs !== true) c.logprobs = null;
    return c;
  });
  return out as ChatCompletion;
}

/**
 * A harness episode's model endpoint: checks the episode's key and limits, forwards the
 * call to the episode's upstream as Chat Completions, stores the call as the episode's next
 * turn, and only then answers the agent (a call the agent got an answer to is stored: a
 * crash loses no answered call). Stateless between calls, like steps: any process serves
 * any episode's endpoint.
 */
export class ModelCalls {
  constructor(
    private readonly store: EpisodeStorage,
    private readonly config: ServerConfig,
    private readonly clock: () => number,
    private readonly post: UpstreamPost = fetchUpstreamPost,
  ) {}

  async call(episodeId: string, key: string | null, adapter: WireAdapter, body: unknown): Promise<EndpointAnswer> {
    const refuse = (status: number, message: string): EndpointAnswer => ({ kind: "json", status, body: adapter.error(status, message) });
    const row = await this.store.getForStep(episodeId);
    const agent = row ? agentOf(row) : null;
    // One answer for an unknown episode, an episode without an agent and a wrong key: ids cannot be probed.
    if (!row || !agent || key === null || !sameHash(await episodeKeyHash(key), agent.keyHash)) return refuse(401, "invalid key for this model endpoint");
    if (row.status !== "active" || row.expiresAt <= this.clock()) {
      return refuse(410, `episode ${episodeId} is ${row.expiresAt <= this.clock() ? "expired" : row.status}${row.stopReason ? ` (${row.stopReason})` : ""}; its model endpoint is closed`);
    }
    if (typeof body !== "object" || body === null || Array.isArray(body)) return refuse(400, "the request body must be a JSON object");
    const request = body as Record<string, unknown>;
    const limit = this.limitReached(agent);
    if (limit) {
      await this.end(row, agent, limit);
      return refuse(429, `${limit === "call_limit" ? `the episode's ${agent.maxCalls} model calls are used` : `the episode's ${agent.maxTokens} tokens are used`}; it has ended (${limit})`);
    }
    const upstream = this.config.modelUpstreams.get(agent.upstream);
    if (!upstream) return refuse(503, `the upstream "${agent.upstream}" this episode was started with is no longer configured on the server`);
    let chatRequest: Record<string, unknown>;
    try {
      chatRequest = adapter.toChat(request);
    } catch (err) {
      if (err instanceof TranslationError) return refuse(err.status, err.message);
      throw err;
    }
    const started = performance.now();
    const forwarded = await this.forward(upstream, agent.model, chatRequest);
    const latencyMs = Math.round((performance.now() - started) * 1000) / 1000;
    const stream = adapter.streamed(request);
    let answer: EndpointAnswer;
    let agentBody: Record<string, unknown> | null;
    if (forwarded.chat) {
      const visible = asAgentAsked(forwarded.chat, adapter.wire === "chat" ? request : {});
      agentBody = adapter.fromChat(visible, request);
      answer = stream ? { kind: "sse", status: 200, events: adapter.stream(agentBody, request) } : { kind: "json", status: 200, body: agentBody };
    } else {
      agentBody = forwarded.errorBody ?? (adapter.error(forwarded.status, forwarded.error ?? "upstream error") as Record<string, unknown>);
      answer = { kind: "json", status: forwarded.status, body: agentBody };
    }
    const usage = forwarded.chat?.usage;
    const call: ModelCall = {
      wire: adapter.wire,
      upstream: upstream.name,
      model: agent.model,
      stream,
      request,
      response: agentBody,
      status: answer.status,
      error: forwarded.chat ? null : (forwarded.error ?? `upstream answered ${forwarded.status}`),
      usage: usage ? { prompt_tokens: usage.prompt_tokens ?? 0, completion_tokens: usage.completion_tokens ?? 0 } : null,
      latency_ms: latencyMs,
    };
    const stored = await this.record(row, agent, call, forwarded.chat, upstream.vllm);
    if (!stored) return refuse(410, `episode ${episodeId} ended while this call ran; its model endpoint is closed`);
    return answer;
  }

  /** The model an episode's agent runs on, for its key; null for a wrong key or an episode without an agent. */
  async modelOf(episodeId: string, key: string | null): Promise<string | null> {
    const row = await this.store.getForStep(episodeId);
    const agent = row ? agentOf(row) : null;
    if (!agent || key === null || !sameHash(await episodeKeyHash(key), agent.keyHash)) return null;
    return agent.model;
  }

  private limitReached(agent: AgentState): Limit | null {
    if (agent.calls >= agent.maxCalls) return "call_limit";
    if (agent.tokens >= agent.maxTokens) return "token_limit";
    return null;
  }

  /** Ends the episode on a limit; the agent runner sees it done and stops the agent. */
  private async end(row: StepRow, agent: AgentState, reason: Limit): Promise<void> {
    await this.store.settleHead(row.id, row.turn, { ...(row.state as object), agent }, { stopReason: reason, truncated: true }, this.clock());
  }

  /** The upstream's chat completion, or why there is none (its status and error body passed on as the agent's answer). */
  private async forward(
    upstream: ModelUpstream,
    model: string,
    chatRequest: Record<string, unknown>,
  ): Promise<{ chat: ChatCompletion | null; status: number; error?: string; errorBody?: Record<string, unknown> }> {
    const { stream: _stream, stream_options: _options, ...rest } = chatRequest;
    const sent: Record<string, unknown> = { ...rest, model, stream: false };
    if (upstream.vllm) {
      sent.return_token_ids = true;
      sent.logprobs = true;
    }
    try {
      const res = await this.post(
        `${upstream.baseUrl}/chat/completions`,
        { "Content-Type": "application/json", ...(upstream.apiKey ? { Authorization: `Bearer ${upstream.apiKey}` } : {}) },
        JSON.stringify(sent),
        this.config.modelCallTimeoutMs,
      );
      const ok = res.status >= 200 && res.status < 300;
      let json: unknown = null;
      try {
        json = JSON.parse(res.text);
      } catch {
        // Not JSON: the status and the start of the text tell the agent and the record what happened.
      }
      const isObject = typeof json === "object" && json !== null && !Array.isArray(json);
      if (ok && isObject && Array.isArray((json as ChatCompletion).choices)) return { chat: json as ChatCompletion, status: 200 };
      const status = ok ? 502 : res.status;
      const error = ok ? "the upstream's answer is not a chat completion" : `upstream answered ${res.status}: ${res.text.slice(0, 500)}`;
      return { chat: null, status, error, ...(isObject && !ok ? { errorBody: json as Record<string, unknown> } : {}) };
    } catch (err) {
      const timedOut = (err as { timedOut?: unknown }).timedOut === true;
      return { chat: null, status: timedOut ? 504 : 502, error: timedOut ? `the upstream took over ${this.config.modelCallTimeoutMs / 1000} s` : `cannot reach the upstream: ${err instanceof Error ? err.message : String(err)}` };
    }
  }

  /**
   * Appends the call as the episode's next turn. Calls are not addressed to a turn, so a
   * call that lost the race to another (an agent calling in parallel) is appended after it.
   * False when the episode is no longer active.
   */
  private async record(first: StepRow, firstAgent: AgentState, call: ModelCall, chat: ChatCompletion | null, vllm: boolean): Promise<boolean> {
    let row: StepRow | undefined = first;
    const message = transcriptMessage(chat);
    const messageJson = JSON.stringify(message);
    const sampled = vllm ? sampledOf(chat) : null;
    const tokens = (call.usage?.prompt_tokens ?? 0) + (call.usage?.completion_tokens ?? 0);
    for (let attempt = 0; attempt < MAX_COMMIT_ATTEMPTS && row; attempt++) {
      // The first attempt's head was read (and its agent parsed) by the call itself.
      const agent = row === first ? firstAgent : agentOf(row);
      if (!agent || row.status !== "active") return false;
      const now = this.clock();
      const expiresAt = now + row.ttlSeconds * 1000;
      const next: AgentState = { ...agent, calls: agent.calls + 1, tokens: agent.tokens + tokens };
      const state = { ...(row.state as object), agent: next };
      const turn = row.turn + 1;
      const response: StepResponse & { call: ModelCall } = { episode_id: row.id, turn, messages: [], done: false, stop_reason: null, truncated: false, expires_at: isoTime(expiresAt), call };
      const reply = JSON.stringify(response);
      const stateJson = JSON.stringify(state);
      const addedBytes = utf8Length(reply) + utf8Length(messageJson) + utf8Length(stateJson) + (sampled ? utf8Length(JSON.stringify(sampled)) : 0);
      const maxEpisodeBytes = this.config.quotas.maxEpisodeBytes ?? Number.MAX_SAFE_INTEGER;
      if (row.storedBytes + addedBytes > maxEpisodeBytes) {
        // The guard would refuse every attempt: the episode is full, which ends it.
        await this.store.settleHead(row.id, row.turn, row.state, { stopReason: "episode_full", truncated: true }, now);
        return false;
      }
      const won = await this.store.commitStep({
        id: row.id,
        expectedTurn: row.turn,
        turn,
        state,
        stateJson,
        message,
        messageJson,
        reply,
        sampled,
        templateHash: row.templateHash,
        templateChanges: null,
        tallies: row.stopTallies,
        status: "active",
        stopReason: null,
        truncated: false,
        error: null,
        now,
        expiresAt,
        addedBytes,
        maxEpisodeBytes,
      });
      if (won) return true;
      row = await this.store.getForStep(row.id);
    }
    return false;
  }
}
