import type { SandboxLimits, SandboxProvider, SandboxRecord, SandboxSpec } from "../../sandbox/types.js";
import type { HarborTaskDir } from "./task-dir.node.js";

/**
 * What the `harbor` environment needs from the server: a sandbox provider, the task's image
 * (built once per content hash), the labels that name a box's owner, and the operator's
 * limits. Injected, so the environment itself stays free of any runtime module; the Node
 * server wires Docker (src/server/node/harbor.ts), the Worker wires Containers (src/server/worker/harbor.ts).
 */
export interface HarborRuntime {
  provider: SandboxProvider;
  /** The image a task's boxes are created from: built from environment/ once per content hash, or the task's prebuilt `docker_image`. */
  imageFor(task: HarborTaskDir): Promise<{ image: string; digest: string }>;
  /** The labels of one episode's box: the server's database, the episode, its tenant, the role. */
  labels(episodeId: string, tenant: string | undefined): Record<string, string>;
  /** The labels of a snapshot image a fork's boxes start from (the server's database, the role), for the sweep. */
  snapshotLabels: Readonly<Record<string, string>>;
  /**
   * Throws (429, with Retry-After) when the server, or this tenant, may not create `count`
   * more boxes now (default 1), or, with `claim`, take a warm one. Called before every create.
   */
  admit(tenant: string | undefined, request?: { count?: number; claim?: boolean }): Promise<void>;
  /** A started box made from `spec` (labels aside) claimed for this episode from the warm pool, or null when there is none. */
  claimWarm?(spec: SandboxSpec, episodeId: string, tenant: string | undefined): Promise<SandboxRecord | null>;
  /**
   * Whether a fork can copy a box (the provider snapshots a container's files). False on
   * Cloudflare Containers, which keep no snapshot: a fork is then refused with
   * `fork_unavailable`, reason `no_snapshot`. Default true.
   */
  forks?: boolean;
  /** Operator setting: every task runs with no network, whatever its task.toml says. */
  forceNoNetwork: boolean;
  /** Limits applied where a task leaves them open (Harbor has no pids field, so `pids` always comes from here). */
  defaults: Required<Pick<SandboxLimits, "pids">> & SandboxLimits;
}
