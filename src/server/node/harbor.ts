import { createHash } from "node:crypto";
import { realpathSync } from "node:fs";
import { createHarborEnv, harborBoxSpec } from "../../envs/builtin/harbor/env.js";
import type { HarborRuntime } from "../../envs/builtin/harbor/runtime.js";
import { loadHarborTasks, type HarborTaskDir } from "../../envs/builtin/harbor/task-dir.node.js";
import type { AnyEnvironment } from "../../envs/index.js";
import { DockerSandboxProvider } from "../../envs/sandbox/docker.node.js";
import { SandboxError } from "../../envs/sandbox/types.js";
import { sandboxAdmission } from "../sandboxes/admission.js";
import { sweepSandboxes, type EpisodeLookup, type SweepResult } from "../sandboxes/janitor.js";
import { SANDBOX_LABELS } from "../sandboxes/labels.js";
import { WarmPool } from "../sandboxes/warm-pool.js";

export interface HarborServeOptions {
  /** Directories of Harbor task directories (`--env harbor:DIR`). */
  dirs: readonly string[];
  /** The server's database (path or URL): its hash names the containers this server's episodes own. */
  database: string;
  /** Live containers of this database at once (EDGEGYM_SANDBOX_MAX_LIVE). */
  maxLive: number;
  /** Live boxes of one tenant (the `sandboxes` quota); null: none. */
  maxPerTenant: number | null;
  /** Boxes this process may create per minute (EDGEGYM_SANDBOX_CREATES_PER_MINUTE). */
  createsPerMinute: number;
  /** Every box offline, whatever its task says (EDGEGYM_SANDBOX_FORCE_NO_NETWORK). */
  forceNoNetwork: boolean;
  /** Processes per box (EDGEGYM_SANDBOX_PIDS). */
  pids: number;
  /** Started, unclaimed boxes kept per task image (EDGEGYM_SANDBOX_WARM); 0 or absent: none. */
  warm?: number;
  /** The egress proxy of `allowlist` boxes: its port, and who filters the host's ports (EDGEGYM_SANDBOX_EGRESS_*). */
  egressPort?: number;
  egressFirewall?: "iptables" | "external";
}

export interface HarborServing {
  env: AnyEnvironment;
  provider: DockerSandboxProvider;
  /** Removes the boxes of this database that no episode owns any more. */
  sweep(lookup: EpisodeLookup): Promise<SweepResult>;
  /** Episodes of this database that have a live box (created for them, not claimed from a pool): where a restarted server looks for agents to watch. */
  boxedEpisodes(): Promise<string[]>;
  /** Starts the warm pools of every task (in the background; images are built first where missing). */
  primeWarmPools(): void;
  /** At shutdown: removes this process's unclaimed warm boxes and stops what the provider runs (its egress proxy). */
  close(): Promise<void>;
}

/**
 * A stable, credential-free name of a database: servers on the same file or URL (same
 * host, same Docker) share their episodes' containers, and no other server touches them.
 */
export function databaseLabel(database: string): string {
  let name = database;
  if (/^postgres(ql)?:\/\//.test(database)) {
    const url = new URL(database);
    url.username = "";
    url.password = "";
    name = url.toString();
  } else if (database !== ":memory:") {
    try {
      name = realpathSync(database);
    } catch {
      // Not created yet: the path as given.
    }
  }
  // An in-memory database is its own process: name it so, so no other server sweeps its boxes.
  if (database === ":memory:") name = `memory:${process.pid}:${Date.now()}`;
  return createHash("sha256").update(name).digest("hex").slice(0, 16);
}

/** The image of a task: built from environment/ once per content hash (tag `edgegym-task/NAME:HASH`), or its prebuilt `docker_image`. */
export function imageBuilder(provider: DockerSandboxProvider): (task: HarborTaskDir) => Promise<{ image: string; digest: string }> {
  // One build per image at a time in this process: a batch of resets of one task waits for one build.
  const building = new Map<string, Promise<{ image: string; digest: string }>>();
  return async (task) => {
    if (task.config.dockerImage) {
      if (!(await provider.imageExists(task.config.dockerImage))) {
        throw new SandboxError("sandbox_build_failed", `task ${task.name} names the prebuilt image ${task.config.dockerImage}, which this Docker daemon does not have; pull or load it first`);
      }
      return { image: task.config.dockerImage, digest: "" };
    }
    if (!task.environmentDir || !task.environmentHash) throw new SandboxError("sandbox_build_failed", `task ${task.name} has neither environment/ nor [environment].docker_image`);
    const slug = task.name.toLowerCase().replace(/[^a-z0-9._-]+/g, "-").replace(/^[-.]+/, "").slice(0, 100) || "task";
    const tag = `edgegym-task/${slug}:${task.environmentHash.replace(/^sha256:/, "").slice(0, 20)}`;
    const pending = building.get(tag);
    if (pending) return pending;
    const work = (async () => {
      if (await provider.imageExists(tag)) return { image: tag, digest: "" };
      const built = await provider.buildImage(task.environmentDir as string, tag, { timeoutMs: task.config.buildTimeoutSec * 1000, labels: { "edgegym.task": task.name } });
      return { image: built.image, digest: built.digest };
    })();
    building.set(tag, work);
    try {
      return await work;
    } finally {
      building.delete(tag);
    }
  };
}

/** Whether a process of this host still runs with this pid (a pid we may not signal is alive). */
function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Boxes of in-memory databases whose server process is gone: their episodes went with it,
 * and no later server shares the database to sweep them by it. A reused pid keeps a box
 * (never removes a live one); the daemon is this host's, so pids are comparable.
 */
export async function removeDeadMemoryBoxes(provider: DockerSandboxProvider): Promise<string[]> {
  const removed: string[] = [];
  for (const box of await provider.list({ [SANDBOX_LABELS.role]: "episode" })) {
    const owner = Number(box.labels[SANDBOX_LABELS.memoryOwner]);
    if (!Number.isInteger(owner) || owner <= 0 || processAlive(owner)) continue;
    await provider.destroy(box.id);
    removed.push(box.id);
  }
  return removed;
}

/**
 * The `harbor` environment on Docker: its tasks loaded, the Docker provider, admission
 * (live boxes of this database, counted from their labels, so every process on the host
 * sees one count), and the sweep that removes boxes no episode owns.
 */
export async function serveHarbor(options: HarborServeOptions): Promise<HarborServing> {
  const tasks: HarborTaskDir[] = [];
  for (const dir of options.dirs) {
    const set = await loadHarborTasks(dir);
    for (const warning of set.warnings) console.warn(`harbor: ${warning}`);
    tasks.push(...set.tasks);
  }
  const provider = new DockerSandboxProvider({
    defaultPids: options.pids,
    ...(options.egressPort === undefined ? {} : { egressPort: options.egressPort }),
    ...(options.egressFirewall === undefined ? {} : { egressFirewall: options.egressFirewall }),
  });
  // Live allowlist boxes of an earlier run reach their hosts again once the proxy is up: start it now when a task needs it.
  const allowlisted = !options.forceNoNetwork && tasks.some((t) => [t.config.network.agent, t.config.network.verifier].some((n) => n.mode === "allowlist"));
  if (allowlisted) {
    await provider.egress.start().catch((err: unknown) => {
      console.warn(`egress proxy not started (allowlist tasks will be refused until it can be): ${err instanceof Error ? err.message : String(err)}`);
    });
  }
  const dbLabel = databaseLabel(options.database);
  const owned = { [SANDBOX_LABELS.db]: dbLabel, [SANDBOX_LABELS.role]: "episode", ...(options.database === ":memory:" ? { [SANDBOX_LABELS.memoryOwner]: String(process.pid) } : {}) };
  const pool = new WarmPool({ provider, dbLabel, perPool: options.warm ?? 0, maxLive: options.maxLive, log: (message) => console.warn(message) });
  const runtime: HarborRuntime = {
    provider,
    imageFor: imageBuilder(provider),
    labels: (episodeId, tenant) => ({ ...owned, [SANDBOX_LABELS.episode]: episodeId, ...(tenant === undefined ? {} : { [SANDBOX_LABELS.tenant]: tenant }) }),
    snapshotLabels: { [SANDBOX_LABELS.db]: dbLabel, [SANDBOX_LABELS.role]: "snapshot" },
    admit: sandboxAdmission({ provider, dbLabel, maxLive: options.maxLive, maxPerTenant: options.maxPerTenant, createsPerMinute: options.createsPerMinute }),
    ...(pool.enabled ? { claimWarm: (spec, episodeId, tenant) => pool.claim(spec, episodeId, tenant) } : {}),
    forceNoNetwork: options.forceNoNetwork,
    defaults: { pids: options.pids },
  };
  // Kept across sweeps: claimed warm boxes are timed from the first sweep that found their episode unknown.
  const unknownSince = new Map<string, number>();
  return {
    env: createHarborEnv(tasks, runtime) as unknown as AnyEnvironment,
    provider,
    sweep: async (lookup) => {
      const orphans = await removeDeadMemoryBoxes(provider);
      const swept = await sweepSandboxes({ provider, dbLabel, lookup, warmPools: pool.keys(), unknownSince });
      return { ...swept, removed: [...orphans, ...swept.removed] };
    },
    boxedEpisodes: async () => (await provider.list(owned)).flatMap((box) => (box.running && box.labels[SANDBOX_LABELS.episode] ? [box.labels[SANDBOX_LABELS.episode] as string] : [])),
    primeWarmPools: () => {
      if (!pool.enabled) return;
      void (async () => {
        for (const task of tasks) {
          try {
            const { image } = await runtime.imageFor(task);
            await pool.prime(harborBoxSpec(task, runtime, image, {}));
          } catch (err) {
            console.warn(`warm pool of task ${task.name} not started: ${err instanceof Error ? err.message : String(err)}`);
          }
        }
      })();
    },
    close: async () => {
      await pool.drain();
      await provider.close?.();
    },
  };
}
