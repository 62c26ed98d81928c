import { posix } from "node:path";
import { DockerEngine, DockerEngineError, isEngineStatus } from "./docker-engine.node.js";
import { buildImage, type BuildOptions, type BuiltImage } from "./docker-build.node.js";
import { toSandboxError } from "./docker-errors.node.js";
import { runExec, runInternal } from "./docker-exec.node.js";
import { containerConfig, isInitFailure, isStorageOptRefusal } from "./docker-container-config.node.js";
import { DockerEgress, type DockerEgressOptions, type EgressRoute } from "./docker-egress.node.js";
import { extractFirstFile, packFile, packFiles } from "./docker-tar.node.js";
import {
  SandboxError,
  type ExecOptions,
  type ExecResult,
  type SandboxListing,
  type SandboxProvider,
  type SandboxRecord,
  type SandboxSpec,
} from "./types.js";

/** The daemon and the operator's defaults; every field has a default. */
export interface DockerSandboxOptions {
  /** An engine to share; else one on `socketPath` (default: DOCKER_HOST, else /var/run/docker.sock). */
  engine?: DockerEngine;
  socketPath?: string;
  /** Limit of each Engine call (default 30 s). */
  requestTimeoutMs?: number;
  /** Limit of a snapshot's commit, which copies the container's writable layer (default 10 min). */
  snapshotTimeoutMs?: number;
  /** Processes per container when the spec sets none (default 512): a fork bomb stops there. */
  defaultPids?: number;
  /** After a time limit's kill, how long an exec waits for its output to close (default 1 s): only a process that left the session (setsid) still holds it then. */
  killGraceMs?: number;
  /** Port of the egress proxy that `allowlist` sandboxes go out through, on the egress network's gateway (default 3128). */
  egressPort?: number;
  /** Name of the internal Docker network of `allowlist` sandboxes (default `edgegym-egress`). */
  egressNetwork?: string;
  /** Who filters the host's ports from that network: the provider with iptables (default), or the operator (`external`); see docker-egress.node.ts. */
  egressFirewall?: "iptables" | "external";
  /** The proxy's other bounds (tunnels per container, timeouts, header size); the three fields above win. */
  egress?: DockerEgressOptions;
}

const SYMLINK_HOPS = 8;

/** Made (as root) by the one claim that wins a warm box: see `claim`. */
const CLAIM_MARK = "/.edgegym-claimed";

interface ContainerJson {
  Image: string;
  State: { Running: boolean };
  Config: { Labels: Record<string, string> | null };
  NetworkSettings?: { Networks?: Record<string, unknown> | null };
}

interface PathStat {
  size: number;
  mode: number;
  linkTarget: string;
}

/**
 * The sandbox interface on a Docker daemon (Node only), through the Engine API on its unix
 * socket. A container is `sleep infinity` under Docker's init (tini reaps the zombies a killed
 * process tree leaves, which would otherwise count against the pids limit), with no
 * privileges, no mounts, no new privileges, fewer capabilities, and the spec's limits and
 * network; every command is an exec into it. The provider keeps no state about containers:
 * any process that reaches the daemon can serve any of them.
 *
 * @example
 * const docker = new DockerSandboxProvider();
 * const box = await docker.create({ image: "edgegym/base:bookworm", limits: { memoryMb: 512 }, network: { mode: "none" }, labels: { "edgegym.episode": id } });
 * const run = await docker.exec(box.id, ["bash", "-lc", "ls"], { timeoutMs: 10_000, maxOutputBytes: 65_536 });
 */
export class DockerSandboxProvider implements SandboxProvider {
  readonly name = "docker";
  readonly engine: DockerEngine;
  /**
   * Whether the daemon enforces `storageMb`: null until a spec asked for it, false once the
   * daemon refused a size (overlay2 enforces one only on xfs with pquota), after which
   * storage limits are advisory and containers are created without one.
   */
  storageEnforced: boolean | null = null;
  private useInit = true;
  private readonly requestTimeoutMs: number;
  private readonly snapshotTimeoutMs: number;
  private readonly defaultPids: number;
  private readonly killGraceMs: number;
  /** The network and proxy of `allowlist` sandboxes, started on the first one; `egress.start()` brings them up at boot. */
  readonly egress: DockerEgress;

  constructor(options: DockerSandboxOptions = {}) {
    this.requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    this.engine = options.engine ?? new DockerEngine({ socketPath: options.socketPath, timeoutMs: this.requestTimeoutMs });
    this.snapshotTimeoutMs = options.snapshotTimeoutMs ?? 600_000;
    this.defaultPids = options.defaultPids ?? 512;
    this.killGraceMs = options.killGraceMs ?? 1_000;
    this.egress = new DockerEgress(this.engine, {
      ...options.egress,
      ...(options.egressPort === undefined ? {} : { port: options.egressPort }),
      ...(options.egressNetwork === undefined ? {} : { network: options.egressNetwork }),
      ...(options.egressFirewall === undefined ? {} : { firewall: options.egressFirewall }),
    });
  }

  async create(spec: SandboxSpec, options: { name?: string } = {}): Promise<SandboxRecord> {
    // An allowlist sandbox sits on the internal egress network; its only way out is the proxy,
    // which checks every destination against the list (docker-egress.node.ts). Anything that
    // cannot be set up refuses the sandbox, never widens it.
    const egress = spec.network.mode === "allowlist" ? await this.egress.route(spec.network.hosts) : undefined;
    const imageId = await this.imageId(spec.image);
    for (;;) {
      const id = await this.createContainer(spec, imageId, options.name, egress);
      try {
        await this.engine.json("POST", `/containers/${encodeURIComponent(id)}/start`);
        // Its address may be one a removed container had: the proxy must not judge it by that one's list.
        if (egress) this.egress.forget();
        return { provider: this.name, id, image: spec.image, imageDigest: imageId };
      } catch (err) {
        await this.destroy(id).catch(() => undefined);
        if (this.useInit && isInitFailure(err)) {
          // A daemon without docker-init: run without one (zombies then stay until the container goes).
          this.useInit = false;
          continue;
        }
        throw startFailed(err, `start of a container from ${spec.image}`);
      }
    }
  }

  exec(id: string, argv: readonly string[], options: ExecOptions): Promise<ExecResult> {
    return runExec(this.engine, id, argv, options, { killGraceMs: this.killGraceMs, requestTimeoutMs: this.requestTimeoutMs });
  }

  async readFile(id: string, path: string, maxBytes: number): Promise<Uint8Array> {
    let target = posix.resolve("/", path);
    for (let hop = 0; hop <= SYMLINK_HOPS; hop++) {
      const { response, abort } = await this.engine.stream("GET", `/containers/${encodeURIComponent(id)}/archive`, { query: { path: target } }).catch((err: unknown) => {
        throw isEngineStatus(err, 404) && !/no such container/i.test(err.message)
          ? new SandboxError("file_not_found", `no file ${target} in the container`, { containerId: id, path: target })
          : toSandboxError(err, `read of ${target}`, id);
      });
      try {
        const stat = pathStat(response.headers["x-docker-container-path-stat"]);
        if (stat?.linkTarget) {
          target = posix.resolve(posix.dirname(target), stat.linkTarget);
          continue;
        }
        if (stat && stat.mode >>> 31 === 1) throw new SandboxError("file_not_found", `${target} is a directory`, { containerId: id, path: target });
        if (stat && stat.size > maxBytes) throw tooLarge(id, target, stat.size, maxBytes);
        const got = await extractFirstFile(response, maxBytes);
        if (got.kind === "too_large") throw tooLarge(id, target, got.size, maxBytes);
        if (got.kind === "not_a_file") throw new SandboxError("file_not_found", `${target} is not a regular file (${got.type})`, { containerId: id, path: target });
        return new Uint8Array(got.bytes);
      } catch (err) {
        throw toSandboxError(err, `read of ${target}`, id);
      } finally {
        abort();
      }
    }
    throw new SandboxError("file_not_found", `${path}: more than ${SYMLINK_HOPS} symbolic links`, { containerId: id, path });
  }

  async writeFile(id: string, path: string, data: string | Uint8Array, options: { mode?: number; user?: string } = {}): Promise<void> {
    const target = posix.resolve("/", path);
    const dir = posix.dirname(target);
    const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    // Without a user the common case (the directory exists) needs no exec; with one, one exec makes the parents and finds the ids.
    const owner = options.user === undefined ? { uid: 0, gid: 0 } : await this.prepareParents(id, dir, options.user);
    const tarball = await packFile(posix.basename(target), bytes, { mode: options.mode ?? 0o644, ...owner });
    await this.putArchive(id, dir, tarball, `write of ${target}`);
  }

  async writeFiles(id: string, dir: string, files: readonly { relativePath: string; mode: number; bytes: Uint8Array }[]): Promise<void> {
    const target = posix.resolve("/", dir);
    for (const file of files) {
      if (file.relativePath.startsWith("/") || file.relativePath.split("/").some((part) => part === ".." || part === "")) {
        throw new SandboxError("sandbox_unavailable", `refused to write ${JSON.stringify(file.relativePath)}: a path under ${target} must be relative and stay inside it`, { containerId: id });
      }
    }
    const tarball = await packFiles(files);
    await this.putArchive(id, target, tarball, `write of ${files.length} files under ${target}`);
  }

  /** `PUT /archive` into `dir`; a directory that is missing is made as root (one exec) and the upload tried once more. */
  private async putArchive(id: string, dir: string, tarball: Buffer, what: string): Promise<void> {
    const put = (): Promise<unknown> =>
      this.engine.json("PUT", `/containers/${encodeURIComponent(id)}/archive`, { query: { path: dir, noOverwriteDirNonDir: true }, raw: { body: tarball, contentType: "application/x-tar" } });
    try {
      await put();
    } catch (err) {
      if (!(isEngineStatus(err, 404) && /could not find the file/i.test(err.message))) throw toSandboxError(err, what, id);
      await this.prepareParents(id, dir, undefined);
      await put().catch((again: unknown) => {
        throw toSandboxError(again, what, id);
      });
    }
  }

  async snapshot(id: string, labels: Readonly<Record<string, string>>): Promise<string> {
    try {
      const container = await this.engine.json<ContainerJson>("GET", `/containers/${encodeURIComponent(id)}/json`);
      const image = await this.engine.json<{ Config: { Labels: Record<string, string> | null } }>("GET", `/images/${encodeURIComponent(container.Image)}/json`);
      // A commit copies the container's labels into the image, and every fork would inherit
      // the parent's episode labels: blank those that the spec set (not the image's own).
      const blanked: Record<string, string> = {};
      for (const key of Object.keys(container.Config.Labels ?? {})) if (!(key in (image.Config.Labels ?? {}))) blanked[key] = "";
      const committed = await this.engine.json<{ Id: string }>("POST", "/commit", {
        query: { container: id, pause: true },
        json: { Labels: { ...blanked, ...labels } },
        timeoutMs: this.snapshotTimeoutMs,
      });
      return committed.Id;
    } catch (err) {
      throw toSandboxError(err, "snapshot", id);
    }
  }

  async destroy(id: string): Promise<void> {
    try {
      await this.engine.json("DELETE", `/containers/${encodeURIComponent(id)}`, { query: { force: true, v: true } });
    } catch (err) {
      if (isEngineStatus(err, 404)) return;
      if (isEngineStatus(err, 409) && /already in progress/i.test(err.message)) return;
      throw toSandboxError(err, "destroy");
    }
  }

  async detachNetworks(id: string): Promise<void> {
    let container: ContainerJson;
    try {
      container = await this.engine.json<ContainerJson>("GET", `/containers/${encodeURIComponent(id)}/json`);
    } catch (err) {
      throw toSandboxError(err, "detach networks");
    }
    for (const network of Object.keys(container.NetworkSettings?.Networks ?? {})) {
      if (network === "none") continue;
      try {
        await this.engine.json("POST", `/networks/${encodeURIComponent(network)}/disconnect`, { json: { Container: id, Force: true } });
      } catch (err) {
        // Already off that network (a retried score): nothing to do.
        if (!isEngineStatus(err, 404) && !isEngineStatus(err, 409)) throw toSandboxError(err, "detach networks");
      }
    }
  }

  async inspect(id: string): Promise<{ running: boolean; labels: Readonly<Record<string, string>> } | null> {
    try {
      const container = await this.engine.json<ContainerJson>("GET", `/containers/${encodeURIComponent(id)}/json`);
      return { running: container.State.Running, labels: container.Config.Labels ?? {} };
    } catch (err) {
      if (isEngineStatus(err, 404)) return null;
      throw toSandboxError(err, "inspect");
    }
  }

  async claim(name: string, newName: string): Promise<string | null> {
    // A rename alone is no lock: every rename that looked the box up by its old name before
    // the first one landed still renames it (eight concurrent renames all succeed). So the
    // claim is a test-and-set inside the box first: of concurrent `mkdir`s of one path,
    // exactly one succeeds. The winner then renames the box for its episode.
    let marked: { exitCode: number | null };
    try {
      marked = await runInternal(this.engine, name, ["mkdir", CLAIM_MARK], this.requestTimeoutMs);
    } catch (err) {
      if (err instanceof SandboxError && err.code === "sandbox_lost") return null;
      throw err;
    }
    if (marked.exitCode !== 0) return null;
    try {
      await this.engine.json("POST", `/containers/${encodeURIComponent(name)}/rename`, { query: { name: newName } });
      return (await this.engine.json<{ Id: string }>("GET", `/containers/${encodeURIComponent(newName)}/json`)).Id;
    } catch (err) {
      if (isEngineStatus(err, 404)) return null;
      throw toSandboxError(err, `claim of ${name}`);
    }
  }

  /** Containers carrying every one of `labels` (with none: every container of the daemon). */
  async list(labels: Readonly<Record<string, string>>): Promise<SandboxListing[]> {
    const filters = JSON.stringify({ label: Object.entries(labels).map(([key, value]) => `${key}=${value}`) });
    try {
      const found = await this.engine.json<{ Id: string; Names: string[] | null; Labels: Record<string, string> | null; State: string; Created: number }[]>("GET", "/containers/json", { query: { all: true, filters } });
      return found.map((c) => ({
        id: c.Id,
        // The Engine lists names with a leading slash ("/name").
        ...(c.Names?.[0] ? { name: c.Names[0].replace(/^\//, "") } : {}),
        labels: c.Labels ?? {},
        running: c.State === "running",
        createdAtMs: c.Created * 1000,
      }));
    } catch (err) {
      throw toSandboxError(err, "list");
    }
  }

  /** Gone already is fine; an image a container still uses is refused (`sandbox_unavailable`) until that container goes. */
  async removeImage(image: string): Promise<void> {
    try {
      await this.engine.json("DELETE", `/images/${encodeURIComponent(image)}`);
    } catch (err) {
      if (isEngineStatus(err, 404)) return;
      throw toSandboxError(err, `removal of image ${image}`);
    }
  }

  async listImages(labels: Readonly<Record<string, string>>): Promise<{ id: string; createdAtMs: number }[]> {
    const filters = JSON.stringify({ label: Object.entries(labels).map(([key, value]) => `${key}=${value}`) });
    try {
      const found = await this.engine.json<{ Id: string; Created: number }[]>("GET", "/images/json", { query: { filters } });
      return found.map((i) => ({ id: i.Id, createdAtMs: i.Created * 1000 }));
    } catch (err) {
      throw toSandboxError(err, "image list");
    }
  }

  /** Stops the egress proxy (its tunnels are cut); containers, the egress network and its host rules stay for the next server. */
  close(): Promise<void> {
    return this.egress.close();
  }

  /** Builds `contextDir` into `tag` (Harbor tasks' environment/ folders); see docker-build.node.ts. */
  buildImage(contextDir: string, tag: string, options: BuildOptions): Promise<BuiltImage> {
    return buildImage(this.engine, contextDir, tag, options);
  }

  /** Whether the daemon has `tag` (a build can be skipped). */
  async imageExists(tag: string): Promise<boolean> {
    try {
      await this.engine.json("GET", `/images/${encodeURIComponent(tag)}/json`);
      return true;
    } catch (err) {
      if (isEngineStatus(err, 404)) return false;
      throw toSandboxError(err, `lookup of image ${tag}`);
    }
  }

  private async imageId(image: string): Promise<string> {
    try {
      return (await this.engine.json<{ Id: string }>("GET", `/images/${encodeURIComponent(image)}/json`)).Id;
    } catch (err) {
      if (isEngineStatus(err, 404)) throw new SandboxError("sandbox_start_failed", `no image ${image} on the daemon (build or pull it first)`, { image });
      throw toSandboxError(err, `lookup of image ${image}`);
    }
  }

  private async createContainer(spec: SandboxSpec, imageId: string, name: string | undefined, egress?: EgressRoute): Promise<string> {
    const withStorage = spec.limits.storageMb !== undefined && this.storageEnforced !== false;
    try {
      const created = await this.engine.json<{ Id: string }>("POST", "/containers/create", {
        ...(name === undefined ? {} : { query: { name } }),
        json: containerConfig(spec, imageId, { pids: this.defaultPids, init: this.useInit, storage: withStorage, egress }),
      });
      if (withStorage) this.storageEnforced = true;
      return created.Id;
    } catch (err) {
      if (withStorage && isStorageOptRefusal(err)) {
        this.storageEnforced = false;
        return this.createContainer(spec, imageId, name, egress);
      }
      throw startFailed(err, `creation of a container from ${spec.image}`);
    }
  }

  /**
   * mkdir -p of `dir` as root; with a user, the directories it made are chowned to that user
   * (an agent can write next to a file it was given) and its uid and gid are returned.
   */
  private async prepareParents(id: string, dir: string, user: string | undefined): Promise<{ uid: number; gid: number }> {
    const script = [
      'd=$1; u=$2; top=""',
      'while [ ! -e "$d" ]; do top=$d; d=${d%/*}; [ -n "$d" ] || d=/; done',
      'mkdir -p -- "$1" || exit 3',
      '[ -n "$u" ] || exit 0',
      // A numeric user without a passwd entry is that uid with gid 0, as Docker runs it.
      'uid=$(id -u -- "$u" 2>/dev/null) || { case "$u" in *[!0-9]*) exit 4;; esac; uid=$u; }',
      'gid=$(id -g -- "$u" 2>/dev/null) || gid=0',
      'if [ -n "$top" ]; then chown -R -- "$uid:$gid" "$top" || exit 5; fi',
      'printf "%s %s\\n" "$uid" "$gid"',
    ].join("\n");
    const run = await runInternal(this.engine, id, ["/bin/sh", "-c", script, "edgegym-parents", dir, user ?? ""], this.requestTimeoutMs);
    if (run.exitCode === 4) throw new SandboxError("sandbox_unavailable", `no user ${user} in the container`, { containerId: id, user, reason: "unknown_user" });
    if (run.exitCode !== 0) throw new SandboxError("file_not_found", `cannot make directory ${dir}: ${run.stderr.trim()}`, { containerId: id, path: dir });
    const [uid, gid] = run.stdout.trim().split(" ").map(Number);
    return { uid: uid ?? 0, gid: gid ?? 0 };
  }
}

function startFailed(err: unknown, what: string): SandboxError {
  if (err instanceof SandboxError) return err;
  if (err instanceof DockerEngineError && err.code !== "engine_status") return toSandboxError(err, what);
  return new SandboxError("sandbox_start_failed", `${what}: ${err instanceof Error ? err.message : String(err)}`);
}

function tooLarge(containerId: string, path: string, size: number, maxBytes: number): SandboxError {
  return new SandboxError("file_too_large", `${path} is ${size} bytes, more than ${maxBytes}`, { containerId, path, size, maxBytes });
}

/** The `X-Docker-Container-Path-Stat` header: base64 JSON of name, size, mode (Go's FileMode), mtime, linkTarget. */
function pathStat(header: string | string[] | undefined): PathStat | null {
  if (typeof header !== "string") return null;
  try {
    const parsed = JSON.parse(Buffer.from(header, "base64").toString("utf8")) as Partial<PathStat>;
    return { size: parsed.size ?? 0, mode: parsed.mode ?? 0, linkTarget: parsed.linkTarget ?? "" };
  } catch {
    return null;
  }
}
