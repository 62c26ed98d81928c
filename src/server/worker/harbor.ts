/**
 * The `harbor` environment on the Worker: the tasks bundled at build time
 * (scripts/worker-harbor.ts, from EDGEGYM_HARBOR_TASKS), each episode in a container of
 * its task's class on Cloudflare Containers (durable/harbor-box.ts), through the same
 * environment code the Node server runs on Docker. What differs is stated in
 * src/envs/sandbox/containers.ts: no forks, no allowlist networks, no warm pool.
 */
import { createHarborEnv } from "../../envs/builtin/harbor/env.js";
import type { HarborRuntime } from "../../envs/builtin/harbor/runtime.js";
import { tasksFromBundle } from "../../envs/builtin/harbor/task-bundle.js";
import type { AnyEnvironment } from "../../envs/index.js";
import type { BoxObjectRpc } from "../../envs/sandbox/containers-rpc.js";
import { ContainersSandboxProvider } from "../../envs/sandbox/containers.js";
import { SandboxError } from "../../envs/sandbox/types.js";
import { SANDBOX_LABELS } from "../sandboxes/labels.js";

/** A Durable Object namespace as the provider uses it: the object it returns is called through the box's RPC surface. */
interface BoxNamespace {
  idFromName(name: string): unknown;
  get(id: never): unknown;
}

/** What the Harbor Worker reads from its bindings besides the box namespaces. */
export interface HarborWorkerVars {
  EDGEGYM_TTL_SECONDS?: string;
  EDGEGYM_SANDBOX_FORCE_NO_NETWORK?: string;
}

const DEFAULT_TTL_SECONDS = 3600;

function truthy(value: string | undefined): boolean {
  return value !== undefined && /^(1|true|yes|on)$/i.test(value.trim());
}

/** The `harbor` environment over a bundle and the Worker's bindings (each task's box class bound by name). */
export function harborWorkerEnv(bundle: unknown, bindings: HarborWorkerVars & Record<string, unknown>): AnyEnvironment {
  const { tasks, bindings: bindingOf, defaultUsers } = tasksFromBundle(bundle);
  const ttl = Number(bindings.EDGEGYM_TTL_SECONDS ?? DEFAULT_TTL_SECONDS);
  const provider = new ContainersSandboxProvider({
    boxObject: (binding, name) => {
      const namespace = bindings[binding] as BoxNamespace | undefined;
      if (!namespace || typeof namespace.idFromName !== "function") return null;
      return namespace.get(namespace.idFromName(name) as never) as BoxObjectRpc;
    },
    idleSeconds: Number.isFinite(ttl) && ttl > 0 ? ttl : DEFAULT_TTL_SECONDS,
    defaultUsers,
  });
  const runtime: HarborRuntime = {
    provider,
    imageFor: async (task) => {
      const binding = bindingOf.get(task.name);
      if (!binding) throw new SandboxError("sandbox_build_failed", `task ${task.name} has no container class in this Worker's build`);
      return { image: binding, digest: task.environmentHash ?? "" };
    },
    labels: (episodeId, tenant) => ({ [SANDBOX_LABELS.role]: "episode", [SANDBOX_LABELS.episode]: episodeId, ...(tenant === undefined ? {} : { [SANDBOX_LABELS.tenant]: tenant }) }),
    snapshotLabels: {},
    // Bounded by each class's max_instances (wrangler config): past it the start fails as sandbox_start_failed.
    admit: async () => undefined,
    forks: false,
    forceNoNetwork: truthy(bindings.EDGEGYM_SANDBOX_FORCE_NO_NETWORK),
    // Containers takes no pids limit from a Worker; kept for the spec, not enforced.
    defaults: { pids: 512 },
  };
  return createHarborEnv(tasks, runtime) as unknown as AnyEnvironment;
}
