/**
 * Why a model request or an environment call failed, as data. `retryable` says whether
 * trying again may help (rate limits, timeouts, 5xx, dropped connections);
 * `retryAfterMs` is the wait the other side asked for, when it said.
 */
export type EvalErrorCode =
  | "model_rate_limited"
  | "model_server_error"
  | "model_timeout"
  | "model_connection_error"
  | "model_auth_error"
  | "model_bad_request"
  | "model_bad_response"
  | "env_unreachable"
  | "env_rejected"
  | "aborted";

export class EvalError extends Error {
  constructor(
    readonly code: EvalErrorCode,
    message: string,
    readonly retryable: boolean,
    readonly retryAfterMs?: number,
    /** For env_rejected: the server's own error code (turn_conflict, episode_expired…). */
    readonly serverCode?: string,
  ) {
    super(message);
    this.name = "EvalError";
  }
}

/** Parses `Retry-After` (seconds or an HTTP date) and `retry-after-ms`, as OpenAI-compatible servers send them. */
export function retryAfterMs(headers: Headers | undefined, now: number = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get("retry-after-ms");
  if (ms !== null && ms.trim() !== "" && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const value = headers.get("retry-after");
  if (value === null || value.trim() === "") return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined;
}

export function isAbortError(err: unknown): boolean {
  return (err instanceof EvalError && err.code === "aborted") || (err instanceof Error && (err.name === "AbortError" || err.name === "APIUserAbortError"));
}
