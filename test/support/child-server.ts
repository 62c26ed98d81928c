import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { delimiter, dirname } from "node:path";

/** A port the OS just handed out and released: free unless something grabs it in between. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

export interface ChildServerOptions {
  command: string;
  args: string[];
  /** Added to this process's environment. */
  env?: Record<string, string>;
  /** Polled (GET) until it answers 200. */
  healthUrl: string;
  startTimeoutMs?: number;
  /** Working directory (default this process's): a benchmark runs another checkout's server. */
  cwd?: string;
  /** How long `stop` waits after SIGTERM before SIGKILL (default 5 s): a server that removes containers as it stops needs longer. */
  stopGraceMs?: number;
}

export interface ChildServer {
  /** The leader's pid (its process group's id): what a benchmark reads CPU time under. */
  pid: number | undefined;
  /** Everything the server printed so far (stdout and stderr). */
  output(): string;
  /** Stops the server and everything it started, and waits for the leader to exit. */
  stop(): Promise<void>;
}

/**
 * Starts a server as a child process in its own process group, so stopping it also stops
 * what it spawned (`npm run` → wrangler → workerd), and waits until it answers.
 */
export async function startChildServer(options: ChildServerOptions): Promise<ChildServer> {
  const child: ChildProcess = spawn(options.command, options.args, {
    // This Node first on PATH, so `npm run …` children (wrangler needs Node 22) run on it too.
    env: { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ""}`, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  let log = "";
  child.stdout?.on("data", (d: Buffer) => (log += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (log += d.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let running = true;
  void exited.then(() => (running = false));

  const groupAlive = (pid: number): boolean => {
    try {
      process.kill(-pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const stop = async (): Promise<void> => {
    const pid = child.pid;
    if (pid === undefined || !groupAlive(pid)) return;
    process.kill(-pid, "SIGTERM");
    // The whole group, not just the leader: workerd may outlive npm by a moment.
    const deadline = Date.now() + (options.stopGraceMs ?? 5_000);
    while (groupAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    if (groupAlive(pid)) process.kill(-pid, "SIGKILL");
    await exited;
  };

  const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
  while (Date.now() < deadline) {
    if (!running) throw new Error(`${options.command} ${options.args.join(" ")} exited before answering:\n${log}`);
    try {
      const res = await fetch(options.healthUrl, { signal: AbortSignal.timeout(2_000) });
      if (res.status === 200) return { pid: child.pid, output: () => log, stop };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  await stop();
  throw new Error(`${options.command} ${options.args.join(" ")} did not answer ${options.healthUrl} in time:\n${log}`);
}
