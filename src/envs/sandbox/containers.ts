/**
 * The sandbox provider of the Worker build: Cloudflare Containers, one container per
 * episode, owned by a Durable Object of its own (src/server/worker/durable/harbor-box.ts)
 * named by the episode's id. Its commands and files go through edgegym's box server inside
 * the image (box-server/), bounded as the Docker provider's are.
 *
 * What Containers cannot do here is refused, never widened or faked:
 * - `allowlist` networks: egress by host name is not something this provider can enforce
 *   (docs/worker.md), so such a box is not created (`sandbox_start_failed`);
 * - snapshots (forks), warm claims, images and listings: Containers has no API for them; the
 *   Worker's Harbor environment offers no fork, and a box's lifetime is bound by its own
 *   object (destroyed at close or score, or when idle past the episode's TTL), not by a sweep.
 * - a pids limit: Containers sets none that a Worker can choose.
 */
import type { BoxAnswer, BoxObjectRpc, BoxStartRequest } from "./containers-rpc.js";
import { SandboxError, type ExecOptions, type ExecResult, type SandboxListing, type SandboxProvider, type SandboxRecord, type SandboxSpec } from "./types.js";

/** The label that names a box's episode (the object's name): the server's SANDBOX_LABELS.episode. */
export const EPISODE_LABEL = "edgegym.episode";

export interface ContainersProviderOptions {
  /** The box object named `name` of the Durable Object class bound as `binding`; null when no such binding exists. */
  boxObject(binding: string, name: string): BoxObjectRpc | null;
  /** Each box is destroyed this long after its last call (the episode's TTL, EDGEGYM_TTL_SECONDS). */
  idleSeconds: number;
  /** The image's USER of each binding (read at build time), the exec user when a call names none. */
  defaultUsers: Readonly<Record<string, string | null>>;
}

/** `<binding>/<episode id>`: which class, which object. */
export function boxId(binding: string, episodeId: string): string {
  return `${binding}/${episodeId}`;
}

function parseBoxId(id: string): { binding: string; name: string } {
  const slash = id.indexOf("/");
  if (slash <= 0 || slash === id.length - 1) throw new SandboxError("sandbox_lost", `"${id}" is not a Containers box id`);
  return { binding: id.slice(0, slash), name: id.slice(slash + 1) };
}

function unwrap<T>(answer: BoxAnswer<T>): T {
  if (answer.ok) return answer.value;
  const { code, message } = answer.error;
  throw new SandboxError(code === "bad_request" ? "sandbox_unavailable" : code, message);
}

export class ContainersSandboxProvider implements SandboxProvider {
  readonly name = "cloudflare-containers";

  constructor(private readonly options: ContainersProviderOptions) {}

  private box(id: string): BoxObjectRpc {
    const { binding, name } = parseBoxId(id);
    const object = this.options.boxObject(binding, name);
    if (!object) throw new SandboxError("sandbox_lost", `this Worker has no container binding ${binding} (was it built with other tasks?)`);
    return object;
  }

  /** `spec.image` is the binding of the task's container class; the box is named by the episode in its labels. */
  async create(spec: SandboxSpec): Promise<SandboxRecord> {
    if (spec.network.mode === "allowlist") {
      throw new SandboxError("sandbox_start_failed", "Cloudflare Containers cannot hold a box to a list of hosts here; give the task no-network or public, or run it on the Node server");
    }
    const episode = spec.labels[EPISODE_LABEL];
    if (!episode) throw new SandboxError("sandbox_start_failed", `a Containers box is named by its episode: the label ${EPISODE_LABEL} is missing`);
    const id = boxId(spec.image, episode);
    const request: BoxStartRequest = {
      labels: { ...spec.labels },
      network: spec.network,
      env: { ...(spec.env ?? {}) },
      defaultUser: this.options.defaultUsers[spec.image] ?? null,
      workdir: spec.workdir ?? null,
      idleSeconds: this.options.idleSeconds,
    };
    unwrap(await this.box(id).boxStart(request));
    return { provider: this.name, id, image: spec.image, imageDigest: "" };
  }

  async claim(): Promise<string | null> {
    // No warm pool on the Worker: every box is started at its reset.
    return null;
  }

  async exec(id: string, argv: readonly string[], options: ExecOptions): Promise<ExecResult> {
    const stdin = typeof options.stdin === "string" ? new TextEncoder().encode(options.stdin) : options.stdin;
    return unwrap(await this.box(id).boxExec([...argv], { ...options, ...(stdin === undefined ? {} : { stdin }) }));
  }

  async readFile(id: string, path: string, maxBytes: number): Promise<Uint8Array> {
    return unwrap(await this.box(id).boxReadFile(path, maxBytes));
  }

  async writeFile(id: string, path: string, data: string | Uint8Array, options: { mode?: number; user?: string } = {}): Promise<void> {
    unwrap(await this.box(id).boxWriteFile(path, typeof data === "string" ? new TextEncoder().encode(data) : data, options));
  }

  async writeFiles(id: string, dir: string, files: readonly { relativePath: string; mode: number; bytes: Uint8Array }[]): Promise<void> {
    unwrap(await this.box(id).boxWriteFiles(dir, [...files]));
  }

  async snapshot(): Promise<string> {
    throw new SandboxError("sandbox_unavailable", "Cloudflare Containers keep no snapshot of a container's files");
  }

  async destroy(id: string): Promise<void> {
    unwrap(await this.box(id).boxDestroy());
  }

  async inspect(id: string): Promise<{ running: boolean; labels: Readonly<Record<string, string>> } | null> {
    return this.box(id).boxInspect();
  }

  /** Durable Objects cannot be listed; each box ends itself (destroy, or its idle timeout), so there is nothing to sweep. */
  async list(): Promise<SandboxListing[]> {
    return [];
  }

  async removeImage(): Promise<void> {
    // No snapshot images are ever made here.
  }

  async listImages(): Promise<{ id: string; createdAtMs: number }[]> {
    return [];
  }
}
