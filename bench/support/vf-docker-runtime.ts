import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { REPO_ROOT } from "../../test/support/node-server.js";

/** The Python of scripts/verifiers-venv.sh vf04 (made or checked on the way: verifiers 0.4.0, pinned). */
export function verifiersPython(): string {
  return execFileSync("bash", ["scripts/verifiers-venv.sh", "vf04"], { cwd: REPO_ROOT, encoding: "utf8", timeout: 600_000 }).trim().split("\n").at(-1) as string;
}

export interface ColdResult {
  create_ms: number;
  first_ms: number;
  destroy_ms: number;
}
export interface TrialResult {
  ms: number;
  reward: number;
  create_ms: number;
  oracle_ms: number;
  verify_ms: number;
  destroy_ms: number;
}
export interface TrialsResult {
  wall_ms: number;
  completed: number;
  errors: string[];
  rewards: number[];
  trial_ms: number[];
}

/**
 * verifiers 0.4.0's Docker runtime in a Python child (bench/vf_docker_runtime.py), one
 * request at a time over JSON lines, each answer awaited under `timeoutMs`. Its containers
 * carry `verifiers.run=<runId>`, so whatever survives a failure is found by that label.
 */
export class VerifiersDockerRuntime {
  private readonly child: ChildProcess;
  private readonly waiting = new Map<number, { resolve: (v: Record<string, unknown>) => void; reject: (e: Error) => void }>();
  private seq = 0;
  private stderr = "";

  constructor(python: string, readonly runId: string) {
    this.child = spawn(python, ["-u", "bench/vf_docker_runtime.py"], { cwd: REPO_ROOT, env: { ...process.env, VF_RUN_ID: runId }, stdio: ["pipe", "pipe", "pipe"] });
    this.child.stderr?.on("data", (d: Buffer) => (this.stderr = (this.stderr + d.toString()).slice(-4000)));
    createInterface({ input: this.child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
      if (!line.startsWith("{")) return; // a library's stray print
      const answer = JSON.parse(line) as { id: number; ok: boolean; error?: string };
      const waiter = this.waiting.get(answer.id);
      this.waiting.delete(answer.id);
      if (answer.ok) waiter?.resolve(answer as unknown as Record<string, unknown>);
      else waiter?.reject(new Error(`verifiers runtime: ${answer.error}`));
    });
    this.child.once("exit", (code) => {
      for (const w of this.waiting.values()) w.reject(new Error(`the verifiers driver exited (${code}): ${this.stderr}`));
      this.waiting.clear();
    });
  }

  request<T>(op: string, args: Record<string, unknown> = {}, timeoutMs = 200_000): Promise<T> {
    const id = ++this.seq;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`verifiers runtime: ${op} took over ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting.set(id, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v as T);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.child.stdin?.write(`${JSON.stringify({ id, op, ...args })}\n`);
    });
  }

  /** Closes its stdin (it stops every open runtime and exits), killed if it is not gone in 30 s. */
  stop(): Promise<void> {
    return new Promise((resolve) => {
      if (this.child.exitCode !== null || this.child.signalCode !== null) return resolve();
      this.child.once("exit", () => resolve());
      this.child.stdin?.end();
      setTimeout(() => this.child.kill("SIGKILL"), 30_000).unref();
    });
  }
}
