import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNodeServer, type RunningServer } from "../../src/server/node/serve.js";
import { databaseLabel } from "../../src/server/node/harbor.js";
import { freePort } from "./child-server.js";
import { containersWith } from "./docker.js";

export interface HarnessServer {
  server: RunningServer;
  /** `edgegym.db=<label>`: the docker filter of this server's boxes. */
  label: string;
  /** Stops the server, removes every box of its database and its folder. */
  close(): Promise<void>;
}

/**
 * An in-process Node server for harness-episode tests: Harbor tasks from `dirs`, the named
 * upstreams (a base URL each), and an egress proxy port of its own (processes on one port
 * share callers, and another test's server has another database).
 */
export async function startHarnessServer(prefix: string, dirs: string[], upstreams: Record<string, { url: string; apiKey?: string; vllm?: boolean }>): Promise<HarnessServer> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const dbPath = join(dir, "edgegym.db");
  const server = await startNodeServer({
    port: 0,
    host: "127.0.0.1",
    dbPath,
    reapIntervalMs: 0,
    harborDirs: dirs,
    config: {
      sandboxEgressPort: await freePort(),
      modelUpstreams: new Map(Object.entries(upstreams).map(([name, u]) => [name, { name, baseUrl: u.url, apiKey: u.apiKey ?? null, vllm: u.vllm ?? false }])),
    },
  });
  const label = `edgegym.db=${databaseLabel(dbPath)}`;
  return {
    server,
    label,
    close: async () => {
      await server.close().catch(() => undefined);
      for (const id of containersWith(label)) execFileSync("docker", ["rm", "-f", id]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
