import { freePort, startChildServer, type ChildServer } from "./child-server.js";

export interface DevWorkerOptions {
  /** Where wrangler keeps the local D1 database and Durable Objects (`--persist-to`). */
  persistTo: string;
  /** More `wrangler dev` flags (e.g. `--var NAME:value`). */
  args?: string[];
  /** Added to the environment of `npm run dev:worker` (e.g. EDGEGYM_HARBOR_TASKS). */
  env?: Record<string, string>;
  /** The checkout to run it in (default this one). */
  cwd?: string;
  startTimeoutMs?: number;
  stopGraceMs?: number;
}

/**
 * `npm run dev:worker` as a user runs it, on a free port, answered at /health. Several of
 * these start at once (vitest runs files in parallel), and wrangler picks its internal
 * sockets' ports by probing for a free one before binding it: now and then two probe the
 * same port and one exits with "Address already in use". That start is tried again on
 * fresh ports.
 */
export async function startDevWorker(options: DevWorkerOptions): Promise<{ server: ChildServer; baseUrl: string }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    try {
      const server = await startChildServer({
        command: "npm",
        args: ["run", "--silent", "dev:worker", "--", "--port", String(port), "--persist-to", options.persistTo, ...(options.args ?? [])],
        env: { WRANGLER_SEND_METRICS: "false", ...options.env },
        healthUrl: `${baseUrl}/health`,
        startTimeoutMs: options.startTimeoutMs ?? 90_000,
        ...(options.stopGraceMs ? { stopGraceMs: options.stopGraceMs } : {}),
        ...(options.cwd ? { cwd: options.cwd } : {}),
      });
      return { server, baseUrl };
    } catch (err) {
      if (attempt >= 3 || !/Address already in use/.test(String(err))) throw err;
    }
  }
}
