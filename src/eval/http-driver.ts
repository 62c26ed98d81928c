import type { ChatMessage, EnvInfo, Episode, Example, ExamplePage, ResetRequest, ResetResponse, Score, ScoreResponse, Split, StepRequest, StepResponse } from "../protocol/index.js";
import type { EpisodeDriver, EpisodeStart, EpisodeStep } from "./driver.js";
import { EvalError, retryAfterMs } from "./errors.js";
import { RetriesExhausted, withRetries, type RetryPolicy } from "./retry.js";

export interface HttpDriverOptions {
  /** The server's root, e.g. `http://127.0.0.1:8787`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer …` when the server has API keys. */
  apiKey?: string | undefined;
  /** Retries of 429, 503, 5xx and dropped connections (every call here is safe to repeat). */
  retry: RetryPolicy;
  /** Per request (default 60 s). */
  timeoutMs?: number;
  /** Injected for tests; default global fetch. */
  fetch?: typeof fetch;
}

const PAGE = 500;

/**
 * Drives episodes on an edgegym server over its HTTP API. Every call is safe to retry:
 * a reset carries an Idempotency-Key, a step carries its turn (the server answers a
 * repeated step with the stored reply), and scoring twice returns the stored score.
 */
export class HttpDriver implements EpisodeDriver {
  readonly location: string;
  private readonly root: string;
  private readonly fetchImpl: typeof fetch;
  /** Episodes that reached a stop condition: nothing to release, the server's TTL reaps them. */
  private readonly finished = new Set<string>();

  constructor(private readonly options: HttpDriverOptions) {
    this.root = options.baseUrl.replace(/\/+$/, "");
    this.location = this.root;
    this.fetchImpl = options.fetch ?? fetch;
  }

  private async once<T>(method: string, path: string, body: unknown, headers: Record<string, string>, signal: AbortSignal | undefined): Promise<T> {
    const timeout = AbortSignal.timeout(this.options.timeoutMs ?? 60_000);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    let res: Response;
    try {
      res = await this.fetchImpl(`${this.root}${path}`, {
        method,
        headers: {
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}),
          ...headers,
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: combined,
      });
    } catch (err) {
      if (signal?.aborted) throw new EvalError("aborted", "aborted", false);
      const why = timeout.aborted ? "timed out" : err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
      throw new EvalError("env_unreachable", `edgegym server ${this.root}: ${method} ${path} ${why}`, true);
    }
    const text = await res.text();
    if (res.ok) return JSON.parse(text) as T;
    let code = "http_error";
    let message = text.slice(0, 300);
    try {
      const parsed = JSON.parse(text) as { error?: { code?: string; message?: string } };
      code = parsed.error?.code ?? code;
      message = parsed.error?.message ?? message;
    } catch {
      // Not our error body (a proxy's page, say): keep the raw text.
    }
    const retryable = res.status === 429 || res.status >= 500;
    throw new EvalError(retryable ? "env_unreachable" : "env_rejected", `edgegym server ${method} ${path}: ${res.status} ${code}: ${message}`, retryable, retryAfterMs(res.headers), code);
  }

  private async call<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<T> {
    try {
      const { value } = await withRetries(
        () => this.once<T>(method, path, body, headers, signal),
        (err) => (err instanceof EvalError ? err : new EvalError("env_unreachable", String(err), true)),
        this.options.retry,
        signal,
      );
      return value;
    } catch (err) {
      throw err instanceof RetriesExhausted ? err.last : err;
    }
  }

  describe(envId: string): Promise<EnvInfo> {
    return this.call<EnvInfo>("GET", `/v1/envs/${encodeURIComponent(envId)}`);
  }

  async examples(envId: string, split: Split, offset: number, limit: number): Promise<Example[]> {
    const out: Example[] = [];
    for (let at = offset; at < offset + limit; at += PAGE) {
      const n = Math.min(PAGE, offset + limit - at);
      const page = await this.call<ExamplePage>("GET", `/v1/envs/${encodeURIComponent(envId)}/examples?split=${split}&offset=${at}&limit=${n}`);
      out.push(...page.examples);
      if (page.examples.length < n) break;
    }
    return out;
  }

  async reset(envId: string, request: ResetRequest, key: string, signal?: AbortSignal): Promise<EpisodeStart> {
    return this.call<ResetResponse>("POST", `/v1/envs/${encodeURIComponent(envId)}/episodes`, request, { "idempotency-key": key }, signal);
  }

  async step(episodeId: string, request: StepRequest, signal?: AbortSignal): Promise<EpisodeStep> {
    const step = await this.call<StepResponse>("POST", `/v1/episodes/${encodeURIComponent(episodeId)}/step`, request, {}, signal);
    if (step.done) this.finished.add(episodeId);
    return step;
  }

  async score(episodeId: string, signal?: AbortSignal): Promise<Score> {
    return (await this.call<ScoreResponse>("POST", `/v1/episodes/${encodeURIComponent(episodeId)}/score`, undefined, {}, signal)).score;
  }

  /** One seat's conversation, page by page (a long game's log may come in several). */
  async seatView(episodeId: string, seat: string, signal?: AbortSignal): Promise<ChatMessage[]> {
    const out: ChatMessage[] = [];
    for (let from: number | null = 0; from !== null; ) {
      const page: Episode = await this.call<Episode>("GET", `/v1/episodes/${encodeURIComponent(episodeId)}?seat=${encodeURIComponent(seat)}&from_turn=${from}`, undefined, {}, signal);
      out.push(...page.messages);
      from = page.next_from_turn;
    }
    return out;
  }

  /** Closes an episode left unfinished (a failed rollout); a finished one costs no request. */
  async close(episodeId: string): Promise<void> {
    if (this.finished.delete(episodeId)) return;
    try {
      await this.once("DELETE", `/v1/episodes/${encodeURIComponent(episodeId)}`, undefined, {}, undefined);
    } catch {
      // The episode expires on its own; a failed close loses nothing.
    }
  }
}
