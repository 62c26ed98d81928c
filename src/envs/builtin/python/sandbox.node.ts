import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { planIsolation, type IsolationReport, type LaunchPlan } from "./isolation.node.js";
import type { PythonIsolation, PythonJob, PythonResult, PythonRunner } from "./runner.js";

export interface PyodideSandboxOptions {
  /** Jobs running at once, one interpreter process each. Default 1. */
  workers?: number;
  /** Interpreter processes kept loaded and waiting for a job (each ~200 MB), so a call does not wait for a start. Default 1. */
  spares?: number;
  /** Most time the replay of a session's earlier cells may take. Default 60 000 ms. */
  replayBudgetMs?: number;
  /** Most time an interpreter may take to start. Default 60 000 ms. */
  startupTimeoutMs?: number;
  /** Memory (RLIMIT_DATA, wasm included) of one interpreter process, MiB. Default 1024. */
  memoryLimitMb?: number;
  /** CPU time (RLIMIT_CPU) of one interpreter process, seconds: a backstop under the wall-clock limits. Default 150. */
  cpuLimitSeconds?: number;
  /**
   * Serve python even when only the weak `process` level is possible (no working bubblewrap).
   * Off by default: the sandbox then refuses jobs and the environment answers env_unavailable.
   */
  allowWeakIsolation?: boolean;
  /** Test seam: keep code generation from strings on in the interpreter, to test the layers beneath. */
  allowCodeGeneration?: boolean;
  /** Do not use namespaces even where they work (tests of the weak level). */
  forbidNamespaces?: boolean;
}

type ChildMessage = { type: "ready" } | { type: "replayed" } | { type: "result"; status: PythonResult["status"]; output: string; truncated: boolean };

/** A started interpreter process and its stdout split into messages. */
interface Interpreter {
  proc: ChildProcess;
  /** Resolves with the next message, or rejects when the process ends first. */
  next(): Promise<ChildMessage>;
}

/** The child script beside this file in dist/, or the .ts source (run by Node's type stripping) in tests. */
function childScript(): string {
  const js = fileURLToPath(new URL("./pyodide-child.node.js", import.meta.url));
  return existsSync(js) ? js : fileURLToPath(new URL("./pyodide-child.node.ts", import.meta.url));
}

function pyodideEntry(): string {
  return createRequire(import.meta.url).resolve("pyodide/pyodide.mjs");
}

function frame(payload: Uint8Array): Buffer {
  const header = Buffer.alloc(4);
  header.writeUInt32BE(payload.length);
  return Buffer.concat([header, payload]);
}

const WEAK_REFUSAL = (detail: string): string =>
  `python is refused on this server: only weak isolation is possible (${detail}), so model-written code could reach the host's network and processes. ` +
  "Install bubblewrap (apt-get install bubblewrap) on a host that allows user namespaces, or accept weak isolation explicitly: " +
  "`edgegym serve --allow-weak-python-sandbox`, config key python_allow_weak_sandbox: true, or EDGEGYM_PYTHON_ALLOW_WEAK_SANDBOX=1.";

/** Most bytes a child may print besides its result: a child flooding stdout is killed. */
const STDOUT_SLACK = 1 << 20;

/**
 * CPython (Pyodide) in separate, single-use OS processes. Each job gets a process of its own
 * that started from the same memory snapshot (Pyodide loaded, prelude run), so no interpreter
 * state outlives a job; a few processes are kept loaded in advance. Processes run under the
 * strongest isolation the host allows (see isolation.node.ts, reported by `isolation()`), and
 * are killed on timeout, on abort, on a crash and once their job is done.
 */
export class PyodideSandbox implements PythonRunner {
  private readonly workers: number;
  private readonly spareCount: number;
  private readonly replayBudgetMs: number;
  private readonly startupTimeoutMs: number;
  private readonly options: PyodideSandboxOptions;
  private plan?: LaunchPlan;
  private snapshot?: Promise<Uint8Array>;
  private readonly spares: Promise<Interpreter>[] = [];
  private readonly live = new Set<ChildProcess>();
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private closed = false;

  constructor(options: PyodideSandboxOptions = {}) {
    this.options = options;
    this.workers = Math.max(1, options.workers ?? 1);
    this.spareCount = Math.max(0, options.spares ?? 1);
    this.replayBudgetMs = options.replayBudgetMs ?? 60_000;
    this.startupTimeoutMs = options.startupTimeoutMs ?? 60_000;
  }

  /** The isolation in force on this host (detected on first use, by trying bubblewrap), and whether jobs are refused at it. */
  isolation(): IsolationReport & PythonIsolation {
    const report = this.launchPlan().report;
    if (report.level === "namespaced" || this.options.allowWeakIsolation) return report;
    return { ...report, refusal: WEAK_REFUSAL(report.detail) };
  }

  /** @internal The launch plan, for tests that probe the namespaces directly. */
  launchPlanForTests(): LaunchPlan {
    return this.launchPlan();
  }

  private launchPlan(): LaunchPlan {
    this.plan ??= planIsolation({
      memoryLimitMb: this.options.memoryLimitMb ?? 1024,
      cpuLimitSeconds: this.options.cpuLimitSeconds ?? 150,
      childScript: childScript(),
      pyodideDir: dirname(pyodideEntry()),
      allowCodeGeneration: this.options.allowCodeGeneration,
      forbidNamespaces: this.options.forbidNamespaces,
    });
    return this.plan;
  }

  private spawnChild(mode?: "snapshot"): ChildProcess {
    if (this.closed) throw new Error("the Python sandbox is closed");
    const { file, args } = this.launchPlan().command([pathToFileURL(pyodideEntry()).href, ...(mode ? [mode] : [])]);
    // Empty environment: no secret of the server reaches the interpreter, not even via /proc/self/environ.
    const proc = spawn(file, args, { env: {}, stdio: ["pipe", "pipe", "ignore"], detached: false });
    this.live.add(proc);
    proc.once("exit", () => this.live.delete(proc));
    proc.stdin?.on("error", () => undefined); // a child that died before reading its input
    return proc;
  }

  /** The snapshot every job process starts from, made once by a sandboxed process; empty (cold starts) if that fails. */
  private memorySnapshot(): Promise<Uint8Array> {
    this.snapshot ??= new Promise<Uint8Array>((resolve) => {
      const proc = this.spawnChild("snapshot");
      const chunks: Buffer[] = [];
      const timer = setTimeout(() => proc.kill("SIGKILL"), this.startupTimeoutMs);
      proc.stdout?.on("data", (c: Buffer) => chunks.push(c));
      proc.once("close", (code) => {
        clearTimeout(timer);
        const all = Buffer.concat(chunks);
        const ok = code === 0 && all.length >= 4 && all.readUInt32BE(0) === all.length - 4;
        resolve(ok ? new Uint8Array(all.subarray(4)) : new Uint8Array());
      });
    });
    return this.snapshot;
  }

  /** Starts an interpreter process and waits until it has loaded. */
  private async startInterpreter(): Promise<Interpreter> {
    const snapshot = await this.memorySnapshot();
    const proc = this.spawnChild();
    const queue: ChildMessage[] = [];
    let wake: (() => void) | undefined;
    let ended = false;
    let pending = "";
    let seen = 0;
    proc.stdout?.setEncoding("utf8");
    proc.stdout?.on("data", (text: string) => {
      seen += text.length;
      if (seen > STDOUT_SLACK * 4) proc.kill("SIGKILL");
      pending += text;
      let newline: number;
      while ((newline = pending.indexOf("\n")) >= 0) {
        const line = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        try {
          queue.push(JSON.parse(line) as ChildMessage);
        } catch {
          // not a message of ours: ignored
        }
      }
      wake?.();
    });
    proc.once("close", () => {
      ended = true;
      wake?.();
    });
    proc.stdin?.write(frame(snapshot));
    const interpreter: Interpreter = {
      proc,
      next: async () => {
        for (;;) {
          const message = queue.shift();
          if (message) return message;
          if (ended) throw new Error(`the Python interpreter process exited (${proc.exitCode ?? proc.signalCode})`);
          await new Promise<void>((resolve) => (wake = resolve));
        }
      },
    };
    const timer = setTimeout(() => proc.kill("SIGKILL"), this.startupTimeoutMs);
    try {
      const first = await interpreter.next();
      if (first.type !== "ready") throw new Error(`unexpected first message from the Python interpreter: ${first.type}`);
    } catch (err) {
      proc.kill("SIGKILL");
      throw err;
    } finally {
      clearTimeout(timer);
    }
    this.idle(proc);
    return interpreter;
  }

  /** A loaded process waiting for a job does not keep the server's event loop alive. */
  private idle(proc: ChildProcess): void {
    proc.unref();
    for (const s of [proc.stdin, proc.stdout]) (s as unknown as { unref?(): void } | null)?.unref?.();
  }

  private busy(proc: ChildProcess): void {
    proc.ref();
    for (const s of [proc.stdin, proc.stdout]) (s as unknown as { ref?(): void } | null)?.ref?.();
  }

  private refill(): void {
    while (!this.closed && this.spares.length < this.spareCount) {
      const starting = this.startInterpreter();
      starting.catch(() => undefined);
      this.spares.push(starting);
    }
  }

  /** Detects the isolation, makes the snapshot and loads the spare processes now rather than on the first call. */
  async warm(): Promise<void> {
    this.refill();
    await Promise.all(this.spares);
  }

  private async acquire(): Promise<void> {
    while (this.running >= this.workers) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
  }

  private release(): void {
    this.running--;
    this.waiting.shift()?.();
  }

  async run(job: PythonJob, signal?: AbortSignal): Promise<PythonResult> {
    if (signal?.aborted) return { status: "timeout", output: "", truncated: false, phase: "replay" };
    const refusal = this.isolation().refusal;
    if (refusal) return { status: "crashed", output: refusal, truncated: false };
    await this.acquire();
    try {
      let interpreter: Interpreter;
      try {
        interpreter = await (this.spares.shift() ?? this.startInterpreter());
      } catch (err) {
        return { status: "crashed", output: err instanceof Error ? err.message : String(err), truncated: false };
      } finally {
        this.refill();
      }
      return await this.runOn(interpreter, job, signal);
    } finally {
      this.release();
    }
  }

  private async runOn(interpreter: Interpreter, job: PythonJob, signal?: AbortSignal): Promise<PythonResult> {
    const { proc } = interpreter;
    this.busy(proc);
    let phase: "replay" | "code" = "replay";
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stop: ((result: PythonResult) => void) | undefined;
    const stopped = new Promise<PythonResult>((resolve) => (stop = resolve));
    const arm = (ms: number): void => {
      clearTimeout(timer);
      timer = setTimeout(() => stop?.({ status: "timeout", output: "", truncated: false, phase }), ms);
    };
    const onAbort = (): void => stop?.({ status: "timeout", output: "", truncated: false, phase });
    signal?.addEventListener("abort", onAbort, { once: true });
    if (signal?.aborted) onAbort(); // aborted while the interpreter was being taken
    const finished = (async (): Promise<PythonResult> => {
      for (;;) {
        const message = await interpreter.next();
        if (message.type === "replayed") {
          phase = "code";
          arm(job.timeoutMs);
        } else if (message.type === "result") {
          return { status: message.status, output: message.output.slice(0, job.outputCap), truncated: message.truncated };
        }
      }
    })().catch((err: unknown): PythonResult => ({ status: "crashed", output: err instanceof Error ? err.message : String(err), truncated: false }));
    try {
      arm(Math.min(this.replayBudgetMs, job.timeoutMs * job.replay.length + 1_000));
      proc.stdin?.write(frame(Buffer.from(JSON.stringify({ replay: job.replay, code: job.code, seed: job.seed, outputCap: job.outputCap }))));
      return await Promise.race([finished, stopped]);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      // Single use: whatever happened, this process is done.
      proc.kill("SIGKILL");
    }
  }

  /** Interpreter processes alive now (spares and running jobs). */
  liveProcesses(): number {
    return this.live.size;
  }

  /** Kills every interpreter process and waits for them to exit (a job running now ends as crashed); a later run starts new ones. */
  async close(): Promise<void> {
    this.closed = true;
    const spares = this.spares.splice(0);
    const exited = (proc: ChildProcess): Promise<void> =>
      proc.exitCode !== null || proc.signalCode !== null ? Promise.resolve() : new Promise((resolve) => proc.once("exit", () => resolve()));
    for (const proc of this.live) proc.kill("SIGKILL");
    await Promise.allSettled(spares);
    const all = [...this.live];
    for (const proc of all) proc.kill("SIGKILL");
    await Promise.all(all.map(exited));
    this.closed = false;
  }
}
