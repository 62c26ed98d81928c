/**
 * The sandbox runtime: one interface over whatever runs an episode's container (Docker on
 * Node today; Cloudflare Containers on the Worker and remote sandbox services later, each a
 * new provider file, never a rewrite). Pure types: no runtime module is imported here.
 *
 * The container is the one part of a sandboxed episode's state that is not in the
 * database, so the episode row names it (`SandboxRecord`) and any process that reaches the
 * provider can serve the episode's next step. Everything a provider returns is bounded:
 * every exec has a time limit and an output cap, every file read a byte cap.
 */

/** Resource limits of one container. Absent fields: the provider's (operator's) defaults. */
export interface SandboxLimits {
  /** CPU cores (fractions allowed), as a CFS quota. */
  cpus?: number;
  /** Memory in MiB; past it the kernel OOM-kills (the exec reports `oomKilled`). */
  memoryMb?: number;
  /** Writable-layer size in MiB, where the storage driver can enforce it (overlay2 on xfs with pquota); otherwise advisory. */
  storageMb?: number;
  /** Processes at once (fork bombs); Harbor has no such field, so the server sets one. */
  pids?: number;
}

/**
 * What the container may reach. `none`: no network interface but loopback. `allowlist`:
 * only these host names (a provider that cannot enforce a list must refuse to create, never
 * widen it). `public`: the provider's ordinary outbound network.
 */
export type SandboxNetwork = { mode: "none" } | { mode: "allowlist"; hosts: readonly string[] } | { mode: "public" };

export interface SandboxSpec {
  /** An image the provider already has (built or pulled beforehand): a tag or an id. */
  image: string;
  limits: SandboxLimits;
  network: SandboxNetwork;
  /** Labels the provider stores on the container: which server database and episode own it, for reattach and orphan sweeps. */
  labels: Readonly<Record<string, string>>;
  /** Working directory of every exec that names none (default: the image's). */
  workdir?: string;
  /** Environment of every exec. Never a server secret: whatever is here, the agent can read. */
  env?: Readonly<Record<string, string>>;
}

export interface ExecOptions {
  /** Wall-clock limit; past it the command's processes are killed and `timedOut` is set. */
  timeoutMs: number;
  /** Output kept, in bytes (stdout and stderr interleaved as they came); the rest is counted and dropped. */
  maxOutputBytes: number;
  /** User to run as (name or uid), default the image's. */
  user?: string;
  workdir?: string;
  env?: Readonly<Record<string, string>>;
  /** Written to the command's standard input, which is then closed. */
  stdin?: string | Uint8Array;
}

export interface ExecResult {
  /** Null when the command was killed (timeout) before it exited. */
  exitCode: number | null;
  /** stdout and stderr as they arrived, up to `maxOutputBytes` (UTF-8, invalid bytes replaced). */
  output: string;
  /** Total output bytes the command wrote, kept or not. */
  outputBytes: number;
  /** Output was cut at `maxOutputBytes`. */
  truncated: boolean;
  timedOut: boolean;
  /** The container's memory limit killed a process of it during this exec. */
  oomKilled: boolean;
  durationMs: number;
}

/** What an episode stores to find its container again from any server process. */
export interface SandboxRecord {
  provider: string;
  /** The provider's id of the container. */
  id: string;
  /** The image it was created from, as named, and its content digest (`sha256:…`). */
  image: string;
  imageDigest: string;
}

/** A container the provider lists: for sweeps of orphans after a crash. */
export interface SandboxListing {
  id: string;
  /** The container's name, where the provider names containers (a claimed warm box's owner is in it). */
  name?: string;
  labels: Readonly<Record<string, string>>;
  running: boolean;
  createdAtMs: number;
}

export interface SandboxProvider {
  /** Stable name stored in `SandboxRecord.provider` ("docker"). */
  readonly name: string;
  /** Creates and starts a container; `name`, when given, must be free (a warm pool names its boxes so a claim can rename them). */
  create(spec: SandboxSpec, options?: { name?: string }): Promise<SandboxRecord>;
  /**
   * Takes the container now named `name` for one owner and renames it `newName`: of
   * concurrent claims of one name (from any process), exactly one gets the container's id,
   * the others null. How a warm box, whose labels cannot change after creation, comes to
   * name its episode.
   */
  claim(name: string, newName: string): Promise<string | null>;
  /** Runs `argv` (no shell unless argv asks for one). A container that is gone throws `SandboxError("sandbox_lost")`. */
  exec(id: string, argv: readonly string[], options: ExecOptions): Promise<ExecResult>;
  /** A file's bytes, at most `maxBytes` (a longer file throws `file_too_large`; a missing one `file_not_found`). */
  readFile(id: string, path: string, maxBytes: number): Promise<Uint8Array>;
  /** Writes a file (parents created), owned by root unless `user` is given. */
  writeFile(id: string, path: string, data: string | Uint8Array, options?: { mode?: number; user?: string }): Promise<void>;
  /**
   * Writes a tree of files under `dir` (created if missing) in one go, owned by root, each
   * with its mode: what a verifier's tests or an oracle's solution are copied in as.
   * Paths are relative and may not leave `dir` (`..` is refused).
   */
  writeFiles(id: string, dir: string, files: readonly { relativePath: string; mode: number; bytes: Uint8Array }[]): Promise<void>;
  /** A new image of the container's filesystem now, to create forks from; returns its id. */
  snapshot(id: string, labels: Readonly<Record<string, string>>): Promise<string>;
  /** Removes the container (and nothing else). Idempotent: a container already gone is not an error. */
  destroy(id: string): Promise<void>;
  /**
   * Takes the container off every network (loopback stays): a harness box of an offline
   * task reached the model endpoint while its agent ran; its verifier runs offline, as the
   * task asks. Optional: a provider without it refuses nothing, the box keeps its network.
   */
  detachNetworks?(id: string): Promise<void>;
  /** Null when the container is gone. */
  inspect(id: string): Promise<{ running: boolean; labels: Readonly<Record<string, string>> } | null>;
  /** Containers carrying every one of these labels. */
  list(labels: Readonly<Record<string, string>>): Promise<SandboxListing[]>;
  /** Removes an image made by `snapshot` (forks' bases); gone already is not an error, one still in use is refused (`sandbox_unavailable`). */
  removeImage(image: string): Promise<void>;
  /** Images carrying every one of these labels (the snapshots forks started from, for the sweep). */
  listImages(labels: Readonly<Record<string, string>>): Promise<{ id: string; createdAtMs: number }[]>;
  /** Releases what the provider runs in this process (Docker: the egress proxy of allowlist sandboxes); the sandboxes stay. Called at server shutdown. */
  close?(): Promise<void>;
}

/** Failures of the sandbox itself (never of the agent's command, whose exit code is data). */
export type SandboxErrorCode =
  | "sandbox_lost"
  | "sandbox_build_failed"
  | "sandbox_start_failed"
  | "sandbox_unavailable"
  | "file_not_found"
  | "file_too_large";

export class SandboxError extends Error {
  constructor(
    readonly code: SandboxErrorCode,
    message: string,
    readonly details?: Readonly<Record<string, unknown>>,
  ) {
    super(message);
    this.name = "SandboxError";
  }
}
