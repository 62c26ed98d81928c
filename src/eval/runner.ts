import type { EvalRollout, EvalRolloutError } from "../protocol/index.js";
import { isAbortError } from "./errors.js";
import { runRollout, type RolloutContext, type RolloutSpec } from "./rollout.js";

export interface EvalRunOptions extends Omit<RolloutContext, "signal"> {
  specs: readonly RolloutSpec[];
  /** Rollouts in flight at once. */
  concurrency: number;
  /** Aborting stops new rollouts and cancels those in flight (they are not recorded). */
  signal?: AbortSignal;
  /** Persists a finished rollout; awaited before the next one is counted. */
  onRollout: (row: EvalRollout) => void | Promise<void>;
}

export interface EvalRunResult {
  /** Rollouts finished and handed to onRollout (failed ones included). */
  completed: number;
  /** The caller's signal stopped the run before every spec ran. */
  interrupted: boolean;
  /** Set when a failure that every other rollout would repeat stopped the run. */
  fatal: EvalRolloutError | null;
}

/**
 * Failures no retry or other rollout can fix: a wrong key, an unknown environment, bad
 * environment arguments or seats. The run stops at the first instead of recording the same
 * failure for every rollout.
 */
const FATAL = new Set([
  "model_auth_error",
  "env_rejected:env_not_found",
  "env_rejected:env_unavailable",
  "env_rejected:invalid_env_args",
  "env_rejected:unauthorized",
  // Who plays which seat is the run's, the same for every rollout.
  "env_rejected:seats_unsupported",
  "env_rejected:unknown_seat",
  "env_rejected:unknown_policy",
  "env_rejected:no_client_seat",
]);

export function isFatal(error: EvalRolloutError | null): boolean {
  return !!error && FATAL.has(error.error);
}

/**
 * Runs the specs with at most `concurrency` rollouts in flight. Each worker takes the
 * next spec when its rollout is done, so a slow rollout holds one slot, not a batch.
 */
export async function runEval(options: EvalRunOptions): Promise<EvalRunResult> {
  const stop = new AbortController();
  const onOuterAbort = (): void => stop.abort();
  if (options.signal?.aborted) stop.abort();
  options.signal?.addEventListener("abort", onOuterAbort, { once: true });
  const { specs, concurrency, onRollout, signal: _outer, ...rolloutContext } = options;
  const ctx: RolloutContext = { ...rolloutContext, signal: stop.signal };
  let next = 0;
  let completed = 0;
  let fatal: EvalRolloutError | null = null;

  const worker = async (): Promise<void> => {
    while (!stop.signal.aborted) {
      const spec = specs[next++];
      if (!spec) return;
      let row: EvalRollout;
      try {
        row = await runRollout(ctx, spec);
      } catch (err) {
        if (isAbortError(err) || stop.signal.aborted) return;
        throw err;
      }
      await onRollout(row);
      completed++;
      if (isFatal(row.error)) {
        fatal ??= row.error;
        stop.abort();
      }
    }
  };

  try {
    await Promise.all(
      Array.from({ length: Math.max(1, Math.min(concurrency, specs.length)) }, async () => {
        try {
          await worker();
        } catch (err) {
          stop.abort();
          throw err;
        }
      }),
    );
  } finally {
    options.signal?.removeEventListener("abort", onOuterAbort);
  }
  return { completed, interrupted: !!options.signal?.aborted && completed < specs.length, fatal };
}
