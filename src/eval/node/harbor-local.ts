import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DockerSandboxProvider } from "../../envs/sandbox/docker.node.js";
import { SandboxError } from "../../envs/sandbox/types.js";
import type { EnvInfo, Example, ResetRequest, Score, Split, StepRequest } from "../../protocol/index.js";
import type { ServerConfig } from "../../server/context.js";
import { databaseLabel } from "../../server/node/harbor.js";
import { startNodeServer, type RunningServer } from "../../server/node/serve.js";
import { SANDBOX_LABELS } from "../../server/sandboxes/labels.js";
import type { EpisodeDriver, EpisodeStart, EpisodeStep } from "../driver.js";
import { HttpDriver } from "../http-driver.js";
import type { RetryPolicy } from "../retry.js";

/*
 * `edgegym eval harbor --env harbor:DIR` without --server: the tasks are served exactly as
 * `edgegym serve --env harbor:DIR` serves them (startNodeServer → serveHarbor: the Docker
 * provider, admission, labels, the operator's sandbox settings), by a server private to this
 * run, on 127.0.0.1 and a database of its own. Every container it makes carries that
 * database's label, so the run removes them all at its end, however it ends.
 */

export interface LocalHarborOptions {
  /** Directories of Harbor task directories (`--env harbor:DIR`). */
  dirs: readonly string[];
  /** The operator's settings (variables, config file): the sandbox limits, quotas, TTLs. */
  config: Partial<ServerConfig>;
  retry: RetryPolicy;
  /** Per request to the private server (a reset includes the image build). */
  timeoutMs: number;
}

export interface LocalHarbor {
  /** Drives the private server; reads to the run as `in-process` (its episode ids end with the run). */
  driver: EpisodeDriver;
  /** The value of the `edgegym.db` label every container of this run carries. */
  label: string;
  /** Removes every container of this run now (a second Ctrl-C, SIGTERM); how many there were. */
  removeContainers(): Promise<number>;
  /** Stops the server and removes what is left: containers of episodes a stop or a failure cut off, its database. Never throws. */
  close(): Promise<{ removed: number; error?: string }>;
}

/**
 * Resets run to their end even after the run was stopped: a reset cut off on this side would
 * still make its container on the server, for an episode the run never hears of. The rollout
 * closes the episode the reset returns, which removes its container. Everything else is the
 * HTTP driver's.
 */
class LocalHarborDriver implements EpisodeDriver {
  readonly location = "in-process";
  constructor(private readonly http: HttpDriver) {}
  describe(envId: string): Promise<EnvInfo> {
    return this.http.describe(envId);
  }
  examples(envId: string, split: Split, offset: number, limit: number): Promise<Example[]> {
    return this.http.examples(envId, split, offset, limit);
  }
  reset(envId: string, request: ResetRequest, key: string): Promise<EpisodeStart> {
    return this.http.reset(envId, request, key);
  }
  step(episodeId: string, request: StepRequest, signal?: AbortSignal): Promise<EpisodeStep> {
    return this.http.step(episodeId, request, signal);
  }
  score(episodeId: string, signal?: AbortSignal): Promise<Score> {
    return this.http.score(episodeId, signal);
  }
  close(episodeId: string): Promise<void> {
    return this.http.close(episodeId);
  }
}

/** The server's own lines (python sandbox, sweeps) are this run's diagnostics: stderr, so stdout stays the report. */
async function logsToStderr<T>(run: () => Promise<T>): Promise<T> {
  const log = console.log;
  console.log = (...args: unknown[]) => console.error(...args);
  try {
    return await run();
  } finally {
    console.log = log;
  }
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Starts the private server of Harbor tasks; fails at once, naming the cause, when Docker does not answer or a task directory does not load. */
export async function startLocalHarbor(options: LocalHarborOptions): Promise<LocalHarbor> {
  const provider = new DockerSandboxProvider();
  try {
    await provider.list({ [SANDBOX_LABELS.role]: "episode", [SANDBOX_LABELS.db]: "none" });
  } catch (err) {
    if (!(err instanceof SandboxError)) throw err;
    throw new Error(`--env harbor:…: the Docker daemon did not answer (DOCKER_HOST or /var/run/docker.sock): ${err.message}`, { cause: err });
  }
  const dir = mkdtempSync(join(tmpdir(), "edgegym-eval-harbor-"));
  const dbPath = join(dir, "episodes.db");
  let server: RunningServer;
  try {
    server = await logsToStderr(() =>
      startNodeServer({
        port: 0,
        host: "127.0.0.1",
        dbPath,
        // Private to this run, and only this process knows its port: no keys (the client has none to send).
        config: { ...options.config, apiKeys: [], adminApiKeys: [] },
        harborDirs: options.dirs,
        // The run closes its episodes and removes the rest at its end; nothing outlives it for a reaper to find.
        reapIntervalMs: 0,
      }),
    );
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const label = databaseLabel(dbPath);
  const removeContainers = async (): Promise<number> => {
    const boxes = await provider.list({ [SANDBOX_LABELS.db]: label });
    await Promise.all(boxes.map((box) => provider.destroy(box.id)));
    return boxes.length;
  };
  let closing: Promise<{ removed: number; error?: string }> | undefined;
  const close = async (): Promise<{ removed: number; error?: string }> => {
    const errors: string[] = [];
    await logsToStderr(() => server.close()).catch((err: unknown) => errors.push(`stopping the server: ${message(err)}`));
    // After the server stopped: no request of it is left to make another container.
    const removed = await removeContainers().catch((err: unknown) => {
      errors.push(`removing containers labelled ${SANDBOX_LABELS.db}=${label}: ${message(err)}`);
      return 0;
    });
    rmSync(dir, { recursive: true, force: true });
    return { removed, ...(errors.length ? { error: errors.join("; ") } : {}) };
  };
  return {
    driver: new LocalHarborDriver(new HttpDriver({ baseUrl: server.url, retry: options.retry, timeoutMs: options.timeoutMs })),
    label,
    removeContainers,
    close: () => (closing ??= close()),
  };
}
