import { randomBytes } from "node:crypto";
import { initialHarborState, type HarborState } from "../../envs/builtin/harbor/state.js";
import type { HarborTaskDir } from "../../envs/builtin/harbor/task-dir.node.js";
import { runVerifier, VerifierFailure } from "../../envs/builtin/harbor/verifier.js";
import { SandboxError, type SandboxLimits, type SandboxProvider } from "../../envs/sandbox/types.js";
import { SANDBOX_LABELS } from "../sandboxes/labels.js";

/** Labels of a check's containers: the role, and the run that made them (so Ctrl-C removes exactly its own). */
export const CHECK_LABELS = { role: SANDBOX_LABELS.role, run: "edgegym.check", task: "edgegym.task" } as const;
export const CHECK_ROLE = "check";
/** A check container older than this belongs to a run that died (a crash, a kill -9): the next run removes it. */
export const STALE_CHECK_MS = 10 * 60_000;
/** Harbor's oracle runs without a limit when `[agent].timeout_sec` is unset; a check must end, so it gets this. */
export const DEFAULT_ORACLE_TIMEOUT_SEC = 600;

const ORACLE_LOG = "/logs/agent/oracle.txt";
const VERIFIER_LOG = "/logs/verifier/test-stdout.txt";
/** Root's own steps (directories, chmod, log tails). */
const SETUP_TIMEOUT_MS = 60_000;
const TAIL_LINES = 15;

/**
 * Why a task has no reward. The verifier's codes and the sandbox's are the same as an
 * episode's score reports; `no_solution` (no solution/solve.sh), `interrupted` (Ctrl-C) and
 * `check_failed` (anything else, with its message) are the check's own.
 */
export type CheckFailureCode = VerifierFailure["code"] | "sandbox_build_failed" | "sandbox_start_failed" | "sandbox_unavailable" | "no_solution" | "interrupted" | "check_failed";

export interface TaskCheck {
  task: string;
  /** The verifier's reward for the oracle's work; null when `failure` says why there is none. */
  reward: number | null;
  failure: { code: CheckFailureCode; message: string } | null;
  /** solve.sh's exit code (null: killed at its time limit, `timedOut`); null when it never ran. */
  oracle: { exitCode: number | null; timedOut: boolean } | null;
  seconds: number;
  /** The CTRF report's counts, when the tests wrote one. */
  tests: { passed: number; failed: number } | null;
  /** For a task that did not score 1: the last lines of oracle.txt and of the tests' output. */
  logs: { oracle: string; verifier: string } | null;
}

/** A task passes when its oracle scored reward 1 (what task authors gate CI on). */
export const passed = (check: TaskCheck): boolean => check.failure === null && check.reward === 1;

export interface CheckOptions {
  provider: SandboxProvider;
  /** The task's image (src/server/node/harbor.ts's `imageBuilder`: built once per content hash). */
  imageFor(task: HarborTaskDir): Promise<{ image: string; digest: string }>;
  /** Limits a task leaves open (Harbor has no pids field). */
  defaults: SandboxLimits;
  /** Tasks at once (default 2). */
  jobs?: number;
  /** Every container of this run carries it (`edgegym.check=RUN`); default a random id. */
  runId?: string;
  /** Aborted (Ctrl-C): no new task starts, the live containers are removed, unfinished tasks are `interrupted`. */
  signal?: AbortSignal;
  /** Called as each task starts and finishes. */
  onStart?(task: HarborTaskDir): void;
  onResult?(check: TaskCheck): void;
  now?: () => number;
}

export interface CheckRun {
  runId: string;
  /** In the tasks' order. */
  checks: TaskCheck[];
  interrupted: boolean;
  /** Containers of earlier runs that the start-up sweep removed. */
  swept: number;
}

class Interrupted extends Error {
  constructor() {
    super("interrupted (Ctrl-C)");
    this.name = "Interrupted";
  }
}

/** `work`, or `Interrupted` as soon as `signal` aborts: a build the daemon keeps going with is not waited for. */
function unlessAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) return Promise.reject(new Interrupted());
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new Interrupted());
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}

function failureOf(err: unknown, signal: AbortSignal | undefined): NonNullable<TaskCheck["failure"]> {
  // Once aborted, a sandbox_lost is the check's own removal of the box, not the task's failure.
  if (err instanceof Interrupted || signal?.aborted) return { code: "interrupted", message: "interrupted (Ctrl-C) before the task finished" };
  if (err instanceof VerifierFailure) return { code: err.code, message: err.message };
  if (err instanceof SandboxError) {
    const code = err.code === "sandbox_build_failed" || err.code === "sandbox_start_failed" || err.code === "sandbox_lost" ? err.code : "sandbox_unavailable";
    return { code, message: err.message };
  }
  return { code: "check_failed", message: err instanceof Error ? err.message : String(err) };
}

/** Removes check containers older than `STALE_CHECK_MS`: what a crashed or killed run left. Younger ones may be another run's, in progress. */
export async function sweepStaleChecks(provider: SandboxProvider, now: number = Date.now()): Promise<number> {
  let removed = 0;
  for (const box of await provider.list({ [CHECK_LABELS.role]: CHECK_ROLE })) {
    if (now - box.createdAtMs < STALE_CHECK_MS) continue;
    await provider.destroy(box.id);
    removed++;
  }
  return removed;
}

/** Removes every container of one run (after Ctrl-C: also one whose creation was in flight). */
export async function removeRunContainers(provider: SandboxProvider, runId: string): Promise<number> {
  const boxes = await provider.list({ [CHECK_LABELS.role]: CHECK_ROLE, [CHECK_LABELS.run]: runId });
  await Promise.all(boxes.map((box) => provider.destroy(box.id)));
  return boxes.length;
}

interface RunContext {
  options: CheckOptions;
  runId: string;
  /** Containers alive now, removed at once on abort so that the execs in them return. */
  live: Set<string>;
}

async function tail(provider: SandboxProvider, id: string, path: string): Promise<string> {
  const run = await provider.exec(id, ["sh", "-c", `tail -n ${TAIL_LINES} "$1" 2>/dev/null`, "tail", path], { timeoutMs: SETUP_TIMEOUT_MS, maxOutputBytes: 4096, user: "root" });
  return run.output.trimEnd();
}

/**
 * Harbor's oracle agent for one task, then its verifier: the task's image, a container with
 * the task's limits and agent network, solution/ uploaded to /solution, `solve.sh` run as
 * the agent (DEBIAN_FRONTEND=noninteractive and `[solution].env`, in the workdir, under
 * `[agent].timeout_sec`), then the tests as an episode's score runs them. The container is
 * removed whatever happens.
 */
async function checkTask(task: HarborTaskDir, context: RunContext): Promise<TaskCheck> {
  const { options, runId, live } = context;
  const { provider, signal } = options;
  const now = options.now ?? Date.now;
  const started = now();
  const check: TaskCheck = { task: task.name, reward: null, failure: null, oracle: null, seconds: 0, tests: null, logs: null };
  const config = task.config;
  let id: string | null = null;
  try {
    const solution = task.solution;
    if (!solution?.some((file) => file.relativePath === "solve.sh")) {
      check.failure = { code: "no_solution", message: `${task.dir} has no solution/solve.sh: there is no oracle to run` };
      return check;
    }
    const { image, digest } = await unlessAborted(options.imageFor(task), signal);
    if (signal?.aborted) throw new Interrupted();
    const record = await provider.create({
      image,
      limits: { ...options.defaults, ...config.limits },
      network: config.network.agent,
      labels: { [CHECK_LABELS.role]: CHECK_ROLE, [CHECK_LABELS.run]: runId, [CHECK_LABELS.task]: task.name },
      ...(config.workdir ? { workdir: config.workdir } : {}),
      env: config.env,
    });
    id = record.id;
    live.add(id);
    if (signal?.aborted) throw new Interrupted();

    const root = { timeoutMs: SETUP_TIMEOUT_MS, maxOutputBytes: 4096, user: "root" };
    // The logs are Harbor's mounted folders, writable by whichever user the agent and the tests run as.
    await provider.exec(id, ["sh", "-c", "mkdir -p /solution /logs/agent /logs/verifier && chmod 777 /logs/agent /logs/verifier"], root);
    await provider.writeFiles(id, "/solution", solution);
    await provider.exec(id, ["sh", "-c", "chmod -R a+rX /solution && chmod +x /solution/solve.sh"], root);

    const timeoutSec = config.agentTimeoutSec ?? DEFAULT_ORACLE_TIMEOUT_SEC;
    const run = await provider.exec(id, ["bash", "-c", `(/solution/solve.sh) > ${ORACLE_LOG} 2>&1`], {
      timeoutMs: Math.ceil(timeoutSec * 1000),
      maxOutputBytes: 4096,
      ...(config.agentUser ? { user: config.agentUser } : {}),
      ...(config.workdir ? { workdir: config.workdir } : {}),
      env: { DEBIAN_FRONTEND: "noninteractive", ...config.solutionEnv },
    });
    check.oracle = { exitCode: run.exitCode, timedOut: run.timedOut };
    if (signal?.aborted) throw new Interrupted();

    // As Harbor does, the tests run even after a failed or timed-out oracle: the reward says what it left.
    const state: HarborState = { ...initialHarborState(task, record, digest), commandMs: run.durationMs, commands: 1 };
    const verified = await runVerifier(provider, task, state);
    check.reward = verified.reward;
    if (verified.tests) check.tests = { passed: verified.tests.summary.passed, failed: verified.tests.summary.failed };
  } catch (err) {
    check.failure = failureOf(err, signal);
  } finally {
    if (id !== null) {
      if (!passed(check) && !signal?.aborted) {
        check.logs = await Promise.all([tail(provider, id, ORACLE_LOG), tail(provider, id, VERIFIER_LOG)]).then(
          ([oracle, verifier]) => ({ oracle, verifier }),
          () => null,
        );
      }
      await provider.destroy(id).catch(() => undefined);
      live.delete(id);
    }
    check.seconds = (now() - started) / 1000;
  }
  return check;
}

/**
 * Checks every task as Harbor's oracle agent would, `jobs` at a time: each task's
 * solution, then its tests, in a container of its own labelled `edgegym.role=check` and
 * `edgegym.check=RUN`. Leftovers of crashed runs (older than 10 minutes) are swept first.
 * On abort no task starts, the live containers are removed at once, and the run's label is
 * swept again at the end, so a creation that was in flight leaves nothing either.
 *
 * @example
 * const run = await checkHarborTasks(tasks, { provider, imageFor: imageBuilder(provider), defaults: { pids: 512 } });
 * const ok = run.checks.every(passed);
 */
export async function checkHarborTasks(tasks: readonly HarborTaskDir[], options: CheckOptions): Promise<CheckRun> {
  const runId = options.runId ?? `${Date.now().toString(36)}-${randomBytes(4).toString("hex")}`;
  const context: RunContext = { options, runId, live: new Set() };
  const swept = await sweepStaleChecks(options.provider, (options.now ?? Date.now)());
  const removeLive = (): void => {
    for (const id of context.live) void options.provider.destroy(id).catch(() => undefined);
  };
  options.signal?.addEventListener("abort", removeLive, { once: true });

  const checks: (TaskCheck | undefined)[] = new Array(tasks.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < tasks.length && !options.signal?.aborted) {
      const index = next++;
      const task = tasks[index] as HarborTaskDir;
      options.onStart?.(task);
      const check = await checkTask(task, context);
      checks[index] = check;
      options.onResult?.(check);
    }
  };
  const jobs = Math.max(1, Math.min(options.jobs ?? 2, tasks.length || 1));
  try {
    await Promise.all(Array.from({ length: jobs }, worker));
  } finally {
    options.signal?.removeEventListener("abort", removeLive);
    if (options.signal?.aborted) await removeRunContainers(options.provider, runId).catch(() => 0);
  }
  const interrupted = options.signal?.aborted ?? false;
  const done = tasks.map(
    (task, i): TaskCheck => checks[i] ?? { task: task.name, reward: null, failure: { code: "interrupted", message: "not started: interrupted (Ctrl-C)" }, oracle: null, seconds: 0, tests: null, logs: null },
  );
  return { runId, checks: done, interrupted, swept };
}
