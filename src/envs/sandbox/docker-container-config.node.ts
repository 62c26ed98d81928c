import { DockerEngineError } from "./docker-engine.node.js";
import type { EgressRoute } from "./docker-egress.node.js";
import type { SandboxSpec } from "./types.js";

/**
 * The body of `POST /containers/create` for a sandbox: what the container may do, in one
 * place to review. The command is `sleep infinity` (the image's own CMD never runs; every
 * command is an exec), under Docker's init so the zombies of killed process trees are reaped.
 *
 * - Never privileged, no binds, mounts or published ports, `no-new-privileges` (a setuid
 *   binary gains nothing).
 * - Capabilities dropped from Docker's default set: NET_RAW (raw sockets: spoofing, ARP on
 *   a bridge), MKNOD (device nodes), AUDIT_WRITE, SETFCAP (file capabilities), SYS_CHROOT.
 *   Kept: CHOWN, DAC_OVERRIDE, FOWNER, FSETID, KILL, SETGID, SETUID, SETPCAP,
 *   NET_BIND_SERVICE: root in the box installs packages (apt drops to _apt with SETUID and
 *   SETGID; dpkg chowns) and kills its own processes (the time limit's kill runs as root).
 *   Checked on bookworm: apt-get install python3-pip, pip install, and iputils-ping (its
 *   setcap fails and it falls back to setuid) all succeed with these dropped.
 * - Memory with swap equal to it (no swap, so the limit is a limit), CFS quota from cpus,
 *   a pids limit always (default 512), a writable-layer size only where the storage driver
 *   enforces one.
 * - Network `none` (loopback only), the default `bridge`, or for an allowlist the internal
 *   egress network with the proxy's variables and the list as a label (docker-egress.node.ts);
 *   those come last so a spec's own env or labels cannot point elsewhere or widen the list.
 */
export function containerConfig(
  spec: SandboxSpec,
  imageId: string,
  options: { pids: number; init: boolean; storage: boolean; egress?: EgressRoute | undefined },
): Record<string, unknown> {
  const { limits } = spec;
  const { egress } = options;
  const memory = limits.memoryMb === undefined ? undefined : Math.round(limits.memoryMb * 1024 * 1024);
  return {
    Image: imageId,
    Entrypoint: ["sleep"],
    Cmd: ["infinity"],
    Labels: { ...spec.labels, ...egress?.labels },
    Env: Object.entries({ ...spec.env, ...egress?.env }).map(([key, value]) => `${key}=${value}`),
    // Docker makes this directory (as root) when it starts the container.
    ...(spec.workdir ? { WorkingDir: spec.workdir } : {}),
    Tty: false,
    OpenStdin: false,
    NetworkDisabled: false,
    HostConfig: {
      Privileged: false,
      Init: options.init,
      NetworkMode: egress ? egress.network : spec.network.mode === "none" ? "none" : "bridge",
      SecurityOpt: ["no-new-privileges"],
      CapDrop: ["NET_RAW", "MKNOD", "AUDIT_WRITE", "SETFCAP", "SYS_CHROOT"],
      PidsLimit: limits.pids ?? options.pids,
      ...(limits.cpus === undefined ? {} : { NanoCpus: Math.round(limits.cpus * 1e9) }),
      ...(memory === undefined ? {} : { Memory: memory, MemorySwap: memory }),
      ...(options.storage && limits.storageMb !== undefined ? { StorageOpt: { size: `${Math.ceil(limits.storageMb)}M` } } : {}),
      // `sleep` writes nothing: no log file per container.
      LogConfig: { Type: "none", Config: {} },
      RestartPolicy: { Name: "no" },
    },
  };
}

/** The daemon cannot enforce a writable-layer size here ("--storage-opt is supported only for overlay over xfs with 'pquota' mount option"). */
export function isStorageOptRefusal(err: unknown): boolean {
  return err instanceof DockerEngineError && err.code === "engine_status" && /storage-opt|storage opt|pquota|quota/i.test(err.message);
}

/** The daemon has no docker-init binary to run as the container's init. */
export function isInitFailure(err: unknown): boolean {
  return err instanceof DockerEngineError && err.code === "engine_status" && /docker-init|init binary|tini/i.test(err.message);
}
