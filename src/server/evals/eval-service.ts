import { parseArgs as parseEnvArgs, type EnvRegistry } from "../../envs/index.js";
import { envInfo } from "../../envs/index.js";
import { EvalRequest, type EvalDeleteResponse, type EvalJob, type EvalRequestInput, type EvalRollout, type EvalStatus, type EvalSummary } from "../../protocol/index.js";
import { OpenAIChatModel, resolveExampleCount, resolveSplit, type ChatModel } from "../../eval/index.js";
import type { ServerConfig } from "../context.js";
import type { EvalJobRow } from "../db/schema.js";
import { ApiError } from "../errors.js";
import { resolvedEnv } from "../episodes/resolve-env.js";
import { canSee, type Tenant } from "../tenants/keys.js";
import { quotaExceeded } from "../tenants/quotas.js";
import { StreamSlots } from "../tenants/stream-slots.js";
import { JobRun } from "./job-run.js";
import { ModelSlots } from "./model-slots.js";
import { checkServerSampling } from "./sampling-policy.js";
import type { EvalStorage } from "../db/stores.js";

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
const TERMINAL: ReadonlySet<EvalStatus> = new Set(["completed", "failed", "cancelled"]);

export const isTerminal = (status: EvalStatus): boolean => TERMINAL.has(status);

/** How many model requests a job can have in flight: one per rollout running. */
/** Jobs the retention pass deletes at most per run: a D1 cron invocation stays a few statements over a bounded set. */
export const RETENTION_BATCH = 100;
const DAY_MS = 24 * 3600 * 1000;

const slotsFor = (job: Pick<EvalJobRow, "request" | "totalRollouts">): number =>
  Math.max(1, Math.min(EvalRequest.parse(job.request).max_concurrent, job.totalRollouts));

/**
 * Evaluation jobs: admission (validation, the server-wide model-request budget), running
 * them in the background, recovery after a restart, cancellation, and reading them back.
 * Jobs and rollouts live in the database; this process only holds the runs it leases.
 */
export class EvalService {
  private readonly owner = `proc_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
  private readonly runs = new Map<string, JobRun>();
  private readonly listeners = new Map<string, Set<() => void>>();
  private readonly slots: ModelSlots;
  /** Open event streams per tenant (in this process): the event_streams quota. */
  readonly streams: StreamSlots;
  private sweepTimer: ReturnType<typeof setInterval> | undefined;
  private stopping = false;

  constructor(
    private readonly store: EvalStorage,
    private readonly registry: EnvRegistry,
    private readonly config: ServerConfig,
    private readonly clock: () => number,
    /** Injected in tests; default: the openai client against the configured endpoint. */
    private readonly makeModel: (request: EvalRequest & { model: string }) => ChatModel = (request) =>
      new OpenAIChatModel({ model: request.model, baseUrl: config.evalBaseUrl ?? "", apiKey: config.evalApiKey ?? undefined, timeoutMs: request.timeout_seconds * 1000 }),
  ) {
    this.slots = new ModelSlots(config.evalMaxConcurrentRequests);
    this.streams = new StreamSlots(config.quotas.maxEventStreams);
  }

  private enabled(): void {
    if (this.registry.runtime !== "node") {
      throw new ApiError("service_unavailable", "evaluation jobs run on the Node server (they outlive a request); use `edgegym serve` or `edgegym eval --server`");
    }
    if (!this.config.evalBaseUrl) {
      throw new ApiError("service_unavailable", "evaluation jobs are off: set EDGEGYM_EVAL_BASE_URL (and EDGEGYM_EVAL_API_KEY) on the server");
    }
  }

  async create(viewer: Tenant, body: EvalRequestInput): Promise<EvalJob> {
    this.enabled();
    // The operator's key pays for these requests: only allowlisted sampling fields, within caps.
    const request = checkServerSampling(EvalRequest.parse(body), { maxTokens: this.config.evalMaxTokens });
    const model = request.model ?? this.config.evalModel;
    if (!model) throw new ApiError("invalid_request", "name a `model`: this server has no default (EDGEGYM_EVAL_MODEL)");
    const env = resolvedEnv(this.registry, request.env_id);
    parseEnvArgs(env, request.env_args);
    const info = envInfo(env);
    const split = resolveSplit(info, request.split);
    let numExamples: number;
    try {
      numExamples = resolveExampleCount(info, split, request.num_examples).count;
    } catch (err) {
      throw new ApiError("task_out_of_range", (err as Error).message);
    }
    const totalRollouts = numExamples * request.rollouts_per_example;
    const cap = this.config.evalMaxRollouts;
    if (totalRollouts > cap) {
      throw new ApiError(
        "eval_too_large",
        `num_examples × rollouts_per_example = ${totalRollouts} rollouts is past this server's limit of ${cap} per job; ask for fewer rows or rollouts, or split the run into jobs`,
        { limit: cap, requested: totalRollouts },
      );
    }
    // Counted in the database, so it holds across processes; before the insert, so jobs
    // created at the same instant can pass it by the number created at once.
    const maxJobs = this.config.quotas.maxConcurrentEvals;
    if (maxJobs !== null) {
      const live = await this.store.countLive(viewer.name);
      if (live >= maxJobs) throw quotaExceeded("concurrent_evals", maxJobs, live, this.config.evalRetryAfterSeconds, "wait for a job to end, or cancel one (POST /v1/evals/{id}/cancel)");
    }
    const wanted = Math.min(request.max_concurrent, totalRollouts);
    if (wanted > this.slots.capacity) {
      throw new ApiError("invalid_request", `max_concurrent ${request.max_concurrent} is past this server's limit of ${this.slots.capacity} concurrent model requests; ask for at most ${this.slots.capacity}`);
    }
    if (!this.slots.tryReserve(wanted)) {
      throw new ApiError(
        "rate_limited",
        `the server is at its limit of ${this.slots.capacity} concurrent model requests (${this.slots.inUse} in use, this job needs ${wanted}); retry later or ask for a lower max_concurrent`,
        { limit: this.slots.capacity, in_use: this.slots.inUse, requested: wanted },
        { "Retry-After": String(this.config.evalRetryAfterSeconds) },
      );
    }
    const now = this.clock();
    let row: EvalJobRow;
    try {
      row = await this.store.insertJob({
        id: `ev_${crypto.randomUUID().replaceAll("-", "")}`,
        envId: env.id,
        envVersion: env.version,
        model,
        status: "queued",
        request: { ...request, model, split },
        split,
        numExamples,
        totalRollouts,
        summary: null,
        error: null,
        cancelRequested: false,
        leaseOwner: null,
        leaseExpiresAt: null,
        runMs: 0,
        createdAt: now,
        updatedAt: now,
        startedAt: null,
        finishedAt: null,
        tenant: viewer.name,
      });
    } catch (err) {
      this.slots.release(wanted);
      throw err;
    }
    const claimed = await this.launch(row, true);
    return this.view(claimed ?? row);
  }

  /** Claims and starts a job; `reserved` when its slots are already counted. Null when another process holds it. */
  private async launch(row: EvalJobRow, reserved: boolean): Promise<EvalJobRow | null> {
    const slots = slotsFor(row);
    if (!reserved && !this.slots.tryReserve(slots)) return null;
    const claimed = this.stopping ? null : await this.store.claim(row.id, this.owner, this.clock(), this.config.evalLeaseMs);
    if (!claimed) {
      this.slots.release(slots);
      return null;
    }
    const run = new JobRun(
      {
        store: this.store,
        registry: this.registry,
        clock: this.clock,
        owner: this.owner,
        leaseMs: this.config.evalLeaseMs,
        maxRollouts: this.config.evalMaxRollouts,
        makeModel: this.makeModel,
        samplingLimits: { maxTokens: this.config.evalMaxTokens },
        notify: (id) => this.notify(id),
      },
      claimed,
    );
    this.runs.set(row.id, run);
    void run.done.finally(() => {
      this.runs.delete(row.id);
      this.slots.release(slots);
    });
    return claimed;
  }

  /**
   * Picks up live jobs nobody holds: after a restart, those this process was running
   * (released on a clean shutdown, or lapsed after a crash) and any another process left.
   * A job whose environment is not served here cannot resume and is marked failed,
   * its stored rollouts kept.
   */
  async sweep(): Promise<void> {
    if (this.stopping || this.registry.runtime !== "node") return;
    for (const row of await this.store.unclaimedJobs(this.clock(), 20)) {
      if (this.runs.has(row.id)) continue;
      if (!this.config.evalBaseUrl) {
        await this.store.fail(row.id, "interrupted, and this server has no model endpoint configured to resume it (EDGEGYM_EVAL_BASE_URL)", this.clock());
        continue;
      }
      if (!this.registry.get(row.envId)) {
        await this.store.fail(row.id, `interrupted, and environment "${row.envId}" is not served here to resume it`, this.clock());
        continue;
      }
      if (row.totalRollouts > this.config.evalMaxRollouts) {
        // Stored by a server without the cap (or with a higher one): building its plan
        // would exhaust memory on every restart, so it ends here with its rollouts kept.
        await this.store.fail(row.id, `interrupted, and its ${row.totalRollouts} rollouts are past this server's limit of ${this.config.evalMaxRollouts} per job (eval_max_rollouts)`, this.clock());
        continue;
      }
      if (row.cancelRequested) {
        await this.store.fail(row.id, "cancelled while no process was running it", this.clock());
        continue;
      }
      await this.launch(row, false);
    }
  }

  /** Recovers interrupted jobs now, then keeps looking for orphaned ones. */
  start(intervalMs = Math.max(1000, Math.floor(this.config.evalLeaseMs / 2))): void {
    this.stopping = false;
    void this.sweep().catch((err: unknown) => console.error("eval sweep failed:", err));
    this.sweepTimer = setInterval(() => void this.sweep().catch((err: unknown) => console.error("eval sweep failed:", err)), intervalMs);
    this.sweepTimer.unref?.();
  }

  /** Stops every run here, releasing the jobs so the next start (here or elsewhere) resumes them. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    const runs = [...this.runs.values()];
    for (const run of runs) run.stop("shutdown");
    await Promise.all(runs.map((r) => r.done));
  }

  /** Another tenant's job answers exactly as an unknown id does, so ids cannot be probed. */
  private async row(viewer: Tenant, id: string): Promise<EvalJobRow> {
    const row = await this.store.getJob(id);
    if (!row || !canSee(viewer, row.tenant)) throw new ApiError("eval_not_found", `no evaluation "${id}"; GET /v1/evals lists them`);
    return row;
  }

  async view(row: EvalJobRow): Promise<EvalJob> {
    const counts = await this.store.progress(row.id);
    const run = this.runs.get(row.id);
    const totalMs = row.runMs + (run ? performance.now() - run.startedAt : 0);
    const request = EvalRequest.parse(row.request);
    return {
      eval_id: row.id,
      status: row.status,
      env_id: row.envId,
      env_version: row.envVersion,
      model: row.model,
      request,
      progress: {
        total: row.totalRollouts,
        done: counts.done,
        errors: counts.errors,
        mean_reward: counts.meanReward,
        rollouts_per_second: totalMs > 0 ? counts.done / (totalMs / 1000) : null,
      },
      summary: (row.summary as EvalSummary | null) ?? null,
      error: row.error,
      created_at: iso(row.createdAt) as string,
      started_at: iso(row.startedAt),
      finished_at: iso(row.finishedAt),
    };
  }

  async get(viewer: Tenant, id: string): Promise<EvalJob> {
    return this.view(await this.row(viewer, id));
  }

  /** The viewer's own jobs; every tenant's for an admin key. */
  async list(viewer: Tenant, opts: { status?: EvalStatus | undefined; limit: number }): Promise<EvalJob[]> {
    return Promise.all((await this.store.listJobs({ ...opts, tenant: viewer.admin ? null : viewer.name })).map((row) => this.view(row)));
  }

  async cancel(viewer: Tenant, id: string): Promise<EvalJob> {
    const row = await this.row(viewer, id);
    if (!isTerminal(row.status)) {
      await this.store.requestCancel(id, this.clock());
      const run = this.runs.get(id);
      if (run) {
        run.stop("cancel");
        await run.done;
      }
      this.notify(id);
    }
    return this.get(viewer, id);
  }

  /**
   * Deletes an ended job with its stored rollouts. A live job is refused (409
   * `eval_running`): cancel it first, so a runner never loses the rows it is writing.
   */
  async delete(viewer: Tenant, id: string): Promise<EvalDeleteResponse> {
    const row = await this.row(viewer, id);
    if (!isTerminal(row.status)) {
      throw new ApiError("eval_running", `evaluation "${id}" is ${row.status}; cancel it first (POST /v1/evals/${id}/cancel), then delete it once it has ended`);
    }
    const gone = await this.store.deleteEnded(id);
    // Ended is final, so the only way to miss here is a concurrent delete that won.
    if (!gone) throw new ApiError("eval_not_found", `no evaluation "${id}"; it was deleted by another request`);
    return { eval_id: id, deleted: true, rollouts_deleted: gone.rollouts };
  }

  /**
   * The retention pass: deletes jobs that ended more than `evalRetentionDays` ago, with
   * their rollouts, at most RETENTION_BATCH per call (the reaper calls it every run, so a
   * backlog drains over a few runs). Null when no retention is set (keep forever).
   */
  async reapEnded(now = this.clock()): Promise<{ jobs: number; rollouts: number } | null> {
    const days = this.config.evalRetentionDays;
    if (days === null) return null;
    return this.store.deleteEndedBefore(now - days * DAY_MS, RETENTION_BATCH);
  }

  /** Rollouts as stored, in (row, rollout index) order, a page at a time. */
  async results(viewer: Tenant, id: string, offset: number, limit: number): Promise<EvalRollout[]> {
    await this.row(viewer, id);
    return this.store.rollouts(id, offset, limit);
  }

  async exists(viewer: Tenant, id: string): Promise<void> {
    await this.row(viewer, id);
  }

  /** Calls `fn` when the job changes (a rollout stored, the job ended); returns the unsubscribe. */
  subscribe(id: string, fn: () => void): () => void {
    const set = this.listeners.get(id) ?? new Set();
    set.add(fn);
    this.listeners.set(id, set);
    return () => {
      set.delete(fn);
      if (set.size === 0) this.listeners.delete(id);
    };
  }

  private notify(id: string): void {
    for (const fn of this.listeners.get(id) ?? []) fn();
  }

  /** Runs in this process now (for tests and /health-style introspection). */
  get activeRuns(): number {
    return this.runs.size;
  }
}

