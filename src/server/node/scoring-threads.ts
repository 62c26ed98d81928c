import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { hashAs } from "../../envs/content-hash.js";
import type { EnvServices } from "../../envs/judges.js";
import { scoredBy, unscored, type RewardInputs, type Rubric } from "../../envs/rubric.js";
import type { AnyEnvironment } from "../../envs/types.js";
import type { Score } from "../../protocol/index.js";
import { envModuleUrl } from "../../envs/load-env-modules.node.js";
import type { FromThread, SentInputs, ThreadData, ToThread } from "./scoring-thread.js";

export interface ScoringThreadsOptions {
  /** Most time one rollout's scoring may take, from when its thread starts it (a group of n: n times this), ms. */
  budgetMs: number;
  /** How long a thread has to answer a ping after a job ran out of time; one that does not is stuck and stopped. Default: the budget, at most 1 s. */
  pingMs?: number;
  /** Where the budget is set, named in the error (default `EDGEGYM_SCORE_TIMEOUT_SECONDS`). */
  settingName?: string;
}

/** The thread's entry beside this file: compiled (dist/), or the source under tsx (a dev dependency) when tests run src/. */
function threadEntry(): { url: URL; execArgv?: string[] } {
  const js = new URL("./scoring-thread.js", import.meta.url);
  if (existsSync(fileURLToPath(js))) return { url: js };
  return { url: new URL("./scoring-thread.ts", import.meta.url), execArgv: [...process.execArgv, "--import", "tsx"] };
}

const seconds = (ms: number): string => `${Number((ms / 1000).toFixed(3))} s`;

interface Job {
  id: number;
  message: Extract<ToThread, { type: "score" }>;
  rubric: Rubric<unknown>;
  resolve(scores: Score[]): void;
  timer?: NodeJS.Timeout;
  /** Times it was sent again after its thread was stopped for another job. */
  resent: number;
}

/** One `--env` module's scoring thread: started at the first reset or score, and again at once after it is stopped. */
class ModuleThread {
  private worker?: Worker;
  private readonly jobs = new Map<number, Job>();
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly moduleUrl: string,
    private readonly options: Required<ScoringThreadsOptions>,
  ) {}

  score(envId: string, services: EnvServices | null, rubric: Rubric<unknown>, group: readonly RewardInputs<unknown>[]): Promise<Score[]> {
    if (this.closed) return Promise.resolve(unscored(rubric, group.length, "scoring failed: the server is stopping"));
    return new Promise((resolve) => {
      const id = this.nextId++;
      const sent: SentInputs[] = group.map(({ parser: _parser, ...rest }) => rest);
      this.send({ id, message: { type: "score", id, envId, services, group: sent }, rubric, resolve, resent: 0 });
    });
  }

  private send(job: Job): void {
    const worker = this.thread();
    try {
      worker.postMessage(job.message);
    } catch (err) {
      // What the rollout holds cannot be copied to another thread (a function in a task row, say).
      job.resolve(unscored(job.rubric, job.message.group.length, `cannot send this rollout to its scoring thread: ${err instanceof Error ? err.message : String(err)}`));
      return;
    }
    this.jobs.set(job.id, job);
  }

  /** Starts the thread ahead of its first job (its import takes a while); no-op when it runs. */
  start(): void {
    if (!this.closed) this.thread();
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const { url, execArgv } = threadEntry();
    const worker = new Worker(url, { workerData: { moduleUrl: this.moduleUrl } satisfies ThreadData, ...(execArgv ? { execArgv } : {}) });
    // The server's own life decides when the process ends, never an idle scoring thread.
    worker.unref();
    worker.on("message", (message: FromThread) => this.receive(worker, message));
    worker.on("error", (err) => this.lost(worker, `the scoring thread failed: ${err.message}`));
    worker.on("exit", (code) => this.lost(worker, `the scoring thread exited (code ${code})`));
    this.worker = worker;
    return worker;
  }

  private receive(worker: Worker, message: FromThread): void {
    if (worker !== this.worker || message.type === "pong") return;
    const job = this.jobs.get(message.id);
    if (!job) return; // ran out of time already: its late answer is dropped
    if (message.type === "started") {
      const budget = this.options.budgetMs * Math.max(1, job.message.group.length);
      job.timer = setTimeout(() => this.expire(worker, job, budget), budget);
      return;
    }
    clearTimeout(job.timer);
    this.jobs.delete(job.id);
    job.resolve(message.type === "scored" ? (message.scores as Score[]) : unscored(job.rubric, job.message.group.length, `scoring failed in its thread: ${message.error}`));
  }

  /** A job past its budget is answered `score_timeout`; then its thread is pinged, and stopped if it cannot answer (a loop holds it). */
  private expire(worker: Worker, job: Job, budget: number): void {
    this.jobs.delete(job.id);
    const per = job.message.group.length > 1 ? `${seconds(this.options.budgetMs)} per rollout, ` : "";
    job.resolve(unscored(job.rubric, job.message.group.length, `score_timeout: scoring ran past its time budget of ${seconds(budget)} (${per}${this.options.settingName})`));
    const id = this.nextId++;
    let answered = false;
    const onPong = (message: FromThread): void => {
      if (message.type === "pong" && message.id === id) answered = true;
    };
    worker.on("message", onPong);
    worker.postMessage({ type: "ping", id } satisfies ToThread);
    setTimeout(() => {
      worker.off("message", onPong);
      if (!answered && worker === this.worker) this.stop(worker);
    }, this.options.pingMs).unref();
  }

  /**
   * Stops a stuck thread and starts the next at once (its import takes a while); the other
   * jobs the stuck one held were waiting on it, not at fault, and go to the new one.
   */
  private stop(worker: Worker): void {
    this.worker = undefined;
    void worker.terminate();
    const waiting = [...this.jobs.values()];
    this.jobs.clear();
    this.start();
    for (const job of waiting) {
      clearTimeout(job.timer);
      job.timer = undefined;
      job.resent++;
      this.send(job);
    }
  }

  /** The thread ended on its own (a crash, `process.exit` in a reward function): its jobs are sent again once, then reported. */
  private lost(worker: Worker, why: string): void {
    if (worker !== this.worker) return;
    this.worker = undefined;
    const jobs = [...this.jobs.values()];
    this.jobs.clear();
    for (const job of jobs) {
      clearTimeout(job.timer);
      job.timer = undefined;
      if (job.resent++ < 1) this.send(job);
      else job.resolve(unscored(job.rubric, job.message.group.length, `scoring failed: ${why}`));
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.worker = undefined;
    for (const job of this.jobs.values()) {
      clearTimeout(job.timer);
      job.resolve(unscored(job.rubric, job.message.group.length, "scoring failed: the server is stopping"));
    }
    this.jobs.clear();
    await worker?.terminate();
  }
}

/**
 * Scoring threads for environments loaded from modules (`edgegym serve --env`): their
 * rubrics (reward functions, group rewards, metrics, routing) run in a worker thread per
 * module, so a reward function that loops forever holds that thread, not the server's, and
 * `/health` and every other request keep answering. A rollout's scoring has a time budget
 * counted from when its thread starts it; past it the score is 0 with `score_timeout: …` on
 * every component (a code trainers mask, `SCORE_FAILURE_CODES`), and a thread too stuck to
 * answer a ping is terminated and started again for the next job.
 *
 * @example
 * const threads = new ScoringThreads({ budgetMs: 120_000 });
 * const envs = (await loadEnvModules(["./my-env.js"])).map((env) => threads.isolate(env));
 * // … serve them; at shutdown:
 * await threads.close();
 */
export class ScoringThreads {
  private readonly threads = new Map<string, ModuleThread>();
  private readonly options: Required<ScoringThreadsOptions>;

  constructor(options: ScoringThreadsOptions) {
    this.options = { pingMs: Math.min(options.budgetMs, 1000), settingName: "EDGEGYM_SCORE_TIMEOUT_SECONDS", ...options };
  }

  /** `env` scored in its module's thread when `loadEnvModules` loaded it; any other environment as is. Hashes as `env`. */
  isolate(env: AnyEnvironment): AnyEnvironment {
    const moduleUrl = envModuleUrl(env);
    return moduleUrl ? this.wrap(env, moduleUrl, null) : env;
  }

  private wrap(env: AnyEnvironment, moduleUrl: string, services: EnvServices | null): AnyEnvironment {
    const thread = this.threads.get(moduleUrl) ?? new ModuleThread(moduleUrl, this.options);
    this.threads.set(moduleUrl, thread);
    const rubric = env.rubric as Rubric<unknown>;
    const setup = env.setup;
    const wrapped: AnyEnvironment = {
      ...env,
      // A reset starts the thread (its import takes a while) while the model works, so the score does not wait for it.
      setup: (...args: Parameters<typeof setup>) => {
        thread.start();
        return setup.apply(env, args);
      },
      rubric: scoredBy(rubric, (group) => thread.score(env.id, services, rubric, group)),
    };
    const withServices = env.withServices?.bind(env);
    // The operator's services reach the thread's copy too (it binds its own with the same ones).
    if (withServices) wrapped.withServices = (given) => this.wrap(withServices(given), moduleUrl, given);
    hashAs(wrapped, env);
    return wrapped;
  }

  /** Stops every thread; jobs still running are answered as failed. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.threads.values()].map((t) => t.close()));
    this.threads.clear();
  }
}
