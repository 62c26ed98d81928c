/**
 * The calls between the Worker's Containers provider (containers.ts) and the Durable Object
 * that owns one episode's container (src/server/worker/durable/harbor-box.ts). Pure types
 * and plain data: they cross a Durable Object RPC, so nothing here is a class instance.
 *
 * One object per box, named by its episode id: any isolate of the Worker reaches the same
 * object, and so the same container, for every step of that episode.
 */
import type { ExecOptions, ExecResult, SandboxNetwork } from "./types.js";

/** What the object needs to start its container (all from the task and the operator's settings). */
export interface BoxStartRequest {
  /** The episode that owns the box (its object's name, kept for inspect's labels). */
  labels: Readonly<Record<string, string>>;
  network: SandboxNetwork;
  /** Environment of every exec (task.toml's `[environment].env`); never a server secret. */
  env: Readonly<Record<string, string>>;
  /** Exec user when a call names none: the image's USER, read at build time (the box's server itself runs as root). */
  defaultUser: string | null;
  workdir: string | null;
  /** The box is destroyed this long after its last call, whoever forgets it (the episode's TTL). */
  idleSeconds: number;
}

/** A failure of the box itself, as data (a thrown Error loses its fields across RPC). */
export interface BoxFailure {
  code: "sandbox_lost" | "sandbox_start_failed" | "sandbox_unavailable" | "file_not_found" | "file_too_large" | "bad_request";
  message: string;
}

export type BoxAnswer<T> = { ok: true; value: T } | { ok: false; error: BoxFailure };

/**
 * The box object's RPC surface; every method answers data, never throws for a box failure.
 * Prefixed `box`, since the Container class it extends has its own start, destroy and fetch.
 */
export interface BoxObjectRpc {
  /** Starts the container once; a second call on a started box is a no-op that answers the same. A box that was started and is gone answers `sandbox_lost`. */
  boxStart(request: BoxStartRequest): Promise<BoxAnswer<{ startedAtMs: number }>>;
  boxExec(argv: string[], options: ExecOptions): Promise<BoxAnswer<ExecResult>>;
  boxReadFile(path: string, maxBytes: number): Promise<BoxAnswer<Uint8Array>>;
  boxWriteFile(path: string, data: Uint8Array, options: { mode?: number; user?: string }): Promise<BoxAnswer<null>>;
  boxWriteFiles(dir: string, files: { relativePath: string; mode: number; bytes: Uint8Array }[]): Promise<BoxAnswer<null>>;
  /** Kills and forgets the container; idempotent. */
  boxDestroy(): Promise<BoxAnswer<null>>;
  /** Null when the box was never started or has been destroyed. */
  boxInspect(): Promise<{ running: boolean; labels: Record<string, string> } | null>;
}
