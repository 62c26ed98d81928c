import { EvalError } from "./errors.js";

export interface RetryPolicy {
  /** Retries after the first attempt. */
  maxRetries: number;
  /** First backoff; doubles each retry (default 500 ms). */
  baseDelayMs?: number;
  /** Longest single wait, Retry-After included (default 30 s). */
  maxDelayMs?: number;
}

export interface Attempted<T> {
  value: T;
  attempts: number;
}

/** Thrown when every attempt failed: the last error, and how many attempts were made. */
export class RetriesExhausted extends Error {
  constructor(
    readonly last: EvalError,
    readonly attempts: number,
  ) {
    super(attempts > 1 ? `${last.message} (after ${attempts} attempts)` : last.message);
    this.name = "RetriesExhausted";
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new EvalError("aborted", "aborted", false));
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new EvalError("aborted", "aborted", false));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Runs `attempt` until it succeeds, fails with a non-retryable error, or has been retried
 * `maxRetries` times. Waits grow exponentially with full jitter (so many clients hit by
 * one rate limit do not come back in step), and a server's Retry-After is honoured.
 */
export async function withRetries<T>(
  attempt: (n: number) => Promise<T>,
  classify: (err: unknown) => EvalError,
  policy: RetryPolicy,
  signal?: AbortSignal,
): Promise<Attempted<T>> {
  const base = policy.baseDelayMs ?? 500;
  const cap = policy.maxDelayMs ?? 30_000;
  for (let n = 1; ; n++) {
    if (signal?.aborted) throw new EvalError("aborted", "aborted", false);
    try {
      return { value: await attempt(n), attempts: n };
    } catch (raw) {
      const err = classify(raw);
      if (err.code === "aborted") throw err;
      if (!err.retryable || n > policy.maxRetries) throw new RetriesExhausted(err, n);
      const backoff = Math.random() * Math.min(cap, base * 2 ** (n - 1));
      await sleep(Math.min(cap, Math.max(backoff, err.retryAfterMs ?? 0)), signal);
    }
  }
}
