import { existsSync } from "node:fs";
import { Worker } from "node:worker_threads";
import type { PythonJob, PythonResult, PythonRunner } from "./runner.js";

export interface PyodideSandboxOptions {
  /** Interpreters running at once, one worker thread each (~40 MB and a 2-4 s start each). Default 1. */
  workers?: number;
  /** Most time the replay of a session's earlier cells may take. Default 60 000 ms. */
  replayBudgetMs?: number;
  /** Most time an interpreter may take to start. Default 60 000 ms. */
  startupTimeoutMs?: number;
}

type WorkerMessage =
  | { type: "ready" }
  | { type: "replayed"; id: number }
  | { type: "result"; id: number; status: PythonResult["status"]; output: string; truncated: boolean };

interface Slot {
  worker?: Worker;
  ready?: Promise<Worker>;
  busy: boolean;
}

/** The compiled worker beside this file in dist/, or the .ts source (run by Node's type stripping) in tests. */
function workerUrl(): URL {
  const js = new URL("./pyodide-worker.node.js", import.meta.url);
  return existsSync(js) ? js : new URL("./pyodide-worker.node.ts", import.meta.url);
}

/**
 * CPython (Pyodide) in worker threads. A worker loads its interpreter once and runs jobs
 * one at a time; a job over its time limit is stopped by terminating the worker, which is
 * replaced on the next job. Workers get an empty environment (no secrets in process.env)
 * and Python's `js` module sees an empty object instead of the thread's globals.
 *
 * Not a security boundary against code written to escape: Pyodide can still reach
 * JavaScript through its own proxies. It keeps ordinary model-written code inside the
 * interpreter, within time and output limits; run untrusted workloads in a container.
 */
export class PyodideSandbox implements PythonRunner {
  private readonly slots: Slot[];
  private readonly waiting: (() => void)[] = [];
  private nextId = 1;
  private readonly replayBudgetMs: number;
  private readonly startupTimeoutMs: number;

  constructor(options: PyodideSandboxOptions = {}) {
    this.slots = Array.from({ length: Math.max(1, options.workers ?? 1) }, () => ({ busy: false }));
    this.replayBudgetMs = options.replayBudgetMs ?? 60_000;
    this.startupTimeoutMs = options.startupTimeoutMs ?? 60_000;
  }

  private async acquire(): Promise<Slot> {
    for (;;) {
      const free = this.slots.find((s) => !s.busy);
      if (free) {
        free.busy = true;
        return free;
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
  }

  private release(slot: Slot): void {
    slot.busy = false;
    this.waiting.shift()?.();
  }

  private discard(slot: Slot): void {
    void slot.worker?.terminate();
    delete slot.worker;
    delete slot.ready;
  }

  private start(slot: Slot): Promise<Worker> {
    if (slot.ready) return slot.ready;
    // stdout/stderr piped and drained: nothing the interpreter prints reaches the server's log.
    const worker = new Worker(workerUrl(), { env: {}, stdout: true, stderr: true });
    worker.stdout.resume();
    worker.stderr.resume();
    worker.unref();
    slot.worker = worker;
    slot.ready = new Promise<Worker>((resolve, reject) => {
      const timer = setTimeout(() => fail(new Error(`the Python interpreter did not start within ${this.startupTimeoutMs} ms`)), this.startupTimeoutMs);
      const onExit = (code: number): void => fail(new Error(`the Python worker exited with code ${code} while starting`));
      const settle = (): void => {
        clearTimeout(timer);
        worker.off("error", fail);
        worker.off("exit", onExit);
      };
      const fail = (err: Error): void => {
        settle();
        if (slot.worker === worker) this.discard(slot);
        reject(err);
      };
      worker.once("message", (msg: WorkerMessage) => {
        if (msg.type !== "ready") return fail(new Error(`unexpected first message from the Python worker: ${msg.type}`));
        settle();
        resolve(worker);
      });
      worker.once("error", fail);
      worker.once("exit", onExit);
    });
    return slot.ready;
  }

  /** Starts the interpreters now rather than on the first call. */
  async warm(): Promise<void> {
    await Promise.all(this.slots.map((s) => this.start(s)));
  }

  async run(job: PythonJob, signal?: AbortSignal): Promise<PythonResult> {
    const slot = await this.acquire();
    try {
      const worker = await this.start(slot);
      return await this.runOn(slot, worker, job, signal);
    } finally {
      this.release(slot);
    }
  }

  private runOn(slot: Slot, worker: Worker, job: PythonJob, signal?: AbortSignal): Promise<PythonResult> {
    const id = this.nextId++;
    worker.ref(); // a running job keeps the process alive; an idle worker does not
    return new Promise<PythonResult>((resolve) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      let phase: "replay" | "code" = "replay";
      const finish = (result: PythonResult, kill: boolean): void => {
        clearTimeout(timer);
        worker.off("message", onMessage);
        worker.off("error", onError);
        worker.off("exit", onExit);
        signal?.removeEventListener("abort", onAbort);
        if (kill && slot.worker === worker) this.discard(slot);
        else worker.unref();
        resolve(result);
      };
      const arm = (ms: number): void => {
        clearTimeout(timer);
        timer = setTimeout(() => finish({ status: "timeout", output: "", truncated: false, phase }, true), ms);
      };
      const onMessage = (msg: WorkerMessage): void => {
        if (msg.type === "replayed" && msg.id === id) {
          phase = "code";
          arm(job.timeoutMs);
        } else if (msg.type === "result" && msg.id === id) {
          finish({ status: msg.status, output: msg.output, truncated: msg.truncated }, msg.status === "crashed");
        }
      };
      const onError = (err: Error): void => finish({ status: "crashed", output: err.message, truncated: false }, true);
      const onExit = (code: number): void => finish({ status: "crashed", output: `worker exited with code ${code}`, truncated: false }, true);
      const onAbort = (): void => finish({ status: "timeout", output: "", truncated: false, phase }, true);
      worker.on("message", onMessage);
      worker.once("error", onError);
      worker.once("exit", onExit);
      signal?.addEventListener("abort", onAbort, { once: true });
      if (signal?.aborted) return onAbort();
      arm(Math.min(this.replayBudgetMs, job.timeoutMs * job.replay.length + 1_000));
      worker.postMessage({ type: "run", id, replay: [...job.replay], code: job.code, seed: job.seed, outputCap: job.outputCap });
    });
  }

  /** Stops every interpreter (a job running now ends as crashed); a later run starts a new one. */
  async close(): Promise<void> {
    const workers = this.slots.map((s) => s.worker).filter((w): w is Worker => w !== undefined);
    this.slots.forEach((s) => {
      delete s.worker;
      delete s.ready;
    });
    await Promise.all(workers.map((w) => w.terminate()));
  }
}
