import { EvalRequest, type EvalSummary } from "../../protocol/index.js";
import type { EnvRegistry } from "../../envs/index.js";
import { InProcessDriver, pendingRollouts, resolveRunSeats, rolloutKey, rolloutSeed, runEval, samplingArgs, SummaryBuilder, type ChatModel, type RolloutSpec } from "../../eval/index.js";
import type { EvalJobRow } from "../db/schema.js";
import { publicRollout, publicRolloutError } from "./public-errors.js";
import { checkServerSampling, type SamplingLimits } from "./sampling-policy.js";
import type { EvalStorage } from "../db/stores.js";

export interface JobRunDeps {
  store: EvalStorage;
  registry: EnvRegistry;
  clock: () => number;
  /** This process's lease owner id. */
  owner: string;
  leaseMs: number;
  /** The server's eval_max_rollouts: the plan is never built for a job past it. */
  maxRollouts: number;
  makeModel: (request: EvalRequest & { model: string }) => ChatModel;
  /** Checked again before running: a job stored by an earlier version (or under looser caps) resumes only within today's. */
  samplingLimits: SamplingLimits;
  /** Called after each stored rollout and when the job ends (wakes SSE streams). */
  notify: (jobId: string) => void;
}

type StopReason = "shutdown" | "cancel" | "lease_lost";

/** Builds the summary from every stored rollout of a job (earlier sessions included). */
export async function summarizeJob(store: EvalStorage, job: Pick<EvalJobRow, "id" | "request">, wallMs: number): Promise<EvalSummary> {
  const request = EvalRequest.parse(job.request);
  const builder = new SummaryBuilder(request.pass_threshold, request.rollouts_per_example);
  const page = 1000;
  for (let offset = 0; ; offset += page) {
    const rows = await store.rollouts(job.id, offset, page);
    rows.forEach((r) => builder.add(r));
    if (rows.length < page) break;
  }
  return builder.build(wallMs);
}

/**
 * One claimed job running in this process: the same runner as `edgegym eval` with the
 * in-process driver, each finished rollout stored as it lands. A heartbeat renews the
 * lease and picks up a cancel asked for through another process. On shutdown the lease
 * is released with the stored rollouts kept, so the job resumes where it stopped.
 */
export class JobRun {
  readonly done: Promise<void>;
  /** performance.now() when this process started running the job (for its rate). */
  readonly startedAt = performance.now();
  private readonly controller = new AbortController();
  private reason: StopReason | null = null;

  constructor(
    private readonly deps: JobRunDeps,
    readonly job: EvalJobRow,
  ) {
    this.done = this.run();
  }

  /** Stop at once: in-flight rollouts are dropped (they rerun on resume), stored ones kept. */
  stop(reason: StopReason): void {
    this.reason ??= reason;
    this.controller.abort();
  }

  private async run(): Promise<void> {
    const { store, clock, owner, leaseMs, registry } = this.deps;
    const job = this.job;
    const elapsed = (): number => performance.now() - this.startedAt;
    const heartbeat = setInterval(() => {
      store.renew(job.id, owner, clock(), leaseMs).then(
        ({ held, cancelRequested }) => {
          if (!held) this.stop("lease_lost");
          else if (cancelRequested) this.stop("cancel");
        },
        () => {}, // A failed renew is retried at the next beat; the lease outlives two misses.
      );
    }, Math.max(50, Math.floor(leaseMs / 3)));
    try {
      const request = { ...checkServerSampling(EvalRequest.parse(job.request), this.deps.samplingLimits), model: job.model };
      const env = registry.get(job.envId);
      if (!env) throw new Error(`environment "${job.envId}" is not served by this process`);
      if (job.numExamples * request.rollouts_per_example > this.deps.maxRollouts) {
        throw new Error(`${job.numExamples * request.rollouts_per_example} rollouts are past this server's limit of ${this.deps.maxRollouts} per job (eval_max_rollouts)`);
      }
      const driver = new InProcessDriver(registry);
      const done = new Set((await store.doneKeys(job.id)).map((k) => rolloutKey(k.exampleId, k.rolloutIndex)));
      const pending = pendingRollouts(job.numExamples, request.rollouts_per_example, done);
      const examples = pending.length ? await driver.examples(env.id, job.split, 0, job.numExamples) : [];
      const specs: RolloutSpec[] = pending.map(({ exampleId, rolloutIndex }) => ({
        example: examples[exampleId] as (typeof examples)[number],
        rolloutIndex,
        seed: rolloutSeed(request.seed, exampleId, rolloutIndex),
      }));
      // A seated environment is played with its default seats (EvalRequest names none): each row records who played which.
      const seats = env.seats ? resolveRunSeats(await driver.describe(env.id), undefined) : undefined;
      const result = await runEval({
        envId: env.id,
        split: job.split,
        envArgs: request.env_args ?? {},
        seats,
        driver,
        model: this.deps.makeModel(request),
        sampling: samplingArgs(request),
        retry: { maxRetries: request.max_retries },
        runKey: `${owner}-${crypto.randomUUID().slice(0, 8)}`,
        specs,
        concurrency: request.max_concurrent,
        signal: this.controller.signal,
        onRollout: async (row) => {
          // Stored as clients will read it: model endpoint details go to the log, not the row.
          await store.insertRollout(job.id, publicRollout(job.id, row), clock());
          this.deps.notify(job.id);
        },
      });
      if (this.reason === "lease_lost") return;
      if (this.reason === "shutdown") {
        await store.release(job.id, owner, clock(), elapsed());
        return;
      }
      const summary = await summarizeJob(store, job, job.runMs + elapsed());
      const status = this.reason === "cancel" ? "cancelled" : result.fatal ? "failed" : "completed";
      await store.finish(job.id, owner, { status, summary, error: result.fatal ? publicRolloutError(job.id, result.fatal, "fatal").error_chain_str : null, now: clock(), runMs: elapsed() });
    } catch (err) {
      if (this.reason === "lease_lost") return;
      const message = err instanceof Error ? err.message : String(err);
      await store.finish(job.id, owner, { status: "failed", summary: null, error: message, now: clock(), runMs: elapsed() }).catch(() => {});
    } finally {
      clearInterval(heartbeat);
      this.deps.notify(job.id);
    }
  }
}
