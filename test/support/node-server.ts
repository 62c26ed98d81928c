import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { jsonInit, readReply, type HttpReply } from "./reply.js";

export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** A free TCP port on 127.0.0.1 (the OS picks one, we release it and hand it on). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export interface ChildServer {
  url: string;
  process: ChildProcess;
  output: () => string;
  stop(): Promise<void>;
}

/**
 * Starts the real CLI entry (`bin/edgegym.js serve`, built by `npm run build`) as a
 * child process and waits for /health. Used for tests over real HTTP.
 */
export async function startNodeServer(opts: { db: string; args?: string[]; env?: Record<string, string>; /** Another built checkout to run (default: this one). */ cwd?: string }): Promise<ChildServer> {
  const port = await freePort();
  let output = "";
  const child = spawn(process.execPath, ["bin/edgegym.js", "serve", "--port", String(port), "--host", "127.0.0.1", "--db", opts.db, ...(opts.args ?? [])], {
    cwd: opts.cwd ?? REPO_ROOT,
    env: { ...process.env, EDGEGYM_API_KEYS: "", ...opts.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (output += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  // Generous: a 2-core machine running other suites can take tens of seconds to start node.
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${output}`);
    try {
      const res = await fetch(`${url}/health`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`server did not answer /health within 60 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    process: child,
    output: () => output,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
        setTimeout(() => child.kill("SIGKILL"), 5_000).unref();
      }),
  };
}

/** JSON over fetch, returning status, parsed body and raw text. */
export async function http(url: string, method: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpReply> {
  return readReply(await fetch(url, jsonInit(method, body, headers)));
}
