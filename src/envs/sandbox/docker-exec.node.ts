import { randomBytes } from "node:crypto";
import type { Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { DockerEngineError, isEngineStatus, type DockerEngine } from "./docker-engine.node.js";
import { toSandboxError } from "./docker-errors.node.js";
import { FrameDemuxer, type OutputStream } from "./docker-frames.node.js";
import { OutputCollector } from "./exec-output.node.js";
import { HeaderParser, killArgv, oomCountArgv, parseCount, TrailerFilter, trailerMarker, wrapperArgv } from "./exec-wrapper.node.js";
import { SandboxError, type ExecOptions, type ExecResult } from "./types.js";

/** The provider's settings an exec runs under. */
export interface ExecSettings {
  /** After a time limit's kill, how long to wait for the output to close before cutting the connection. */
  killGraceMs: number;
  /** Limit of each Engine call the exec makes (create, start, inspect, the kill). */
  requestTimeoutMs: number;
}

/** How long an exec whose wrapper was SIGKILLed waits to learn whether the container stopped. */
const STOP_WAIT_MS = 1_500;

interface ExecInspect {
  Running: boolean;
  ExitCode: number | null;
}

/**
 * One command in a running container through the Engine's exec API, under the wrapper of
 * exec-wrapper.node.ts: output interleaved and capped, a time limit that kills the command's
 * process tree, and OOM kills seen. Docker semantics otherwise: the exec ends when the
 * command has exited and its output pipes closed; a background child that keeps them open
 * (`server &`, unlike `nohup server >log 2>&1 &`) keeps running, and the daemon ends the
 * stream about 2 s after the command exited (20.10's shim; `docker exec` waits the same). A
 * time limit that passes in that window, after the wrapper saw the command exit, is no time
 * limit: the stream is cut and nothing is killed. A process that left the session (setsid)
 * is out of the kill's reach.
 *
 * @example await runExec(engine, id, ["bash", "-lc", "make test"], { timeoutMs: 60_000, maxOutputBytes: 65_536 }, settings)
 */
export async function runExec(engine: DockerEngine, containerId: string, argv: readonly string[], options: ExecOptions, settings: ExecSettings): Promise<ExecResult> {
  const started = performance.now();
  const marker = trailerMarker(randomBytes(12).toString("hex"));
  const execId = await createExec(engine, containerId, {
    Cmd: wrapperArgv(marker, argv),
    Env: envList(options.env),
    User: options.user ?? "",
    WorkingDir: options.workdir ?? "",
    AttachStdin: options.stdin !== undefined,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
  }, settings.requestTimeoutMs);
  const { socket, head } = await engine
    .hijack(`/exec/${execId}/start`, { Detach: false, Tty: false }, settings.requestTimeoutMs)
    .catch((err: unknown) => Promise.reject(toSandboxError(err, "exec start", containerId)));

  const output = new OutputCollector(options.maxOutputBytes);
  const header = new HeaderParser();
  const trailer = new TrailerFilter(marker);
  let timedOut = false;
  let kill: Promise<"done" | "lost"> | null = null;
  const killTree = (): void => {
    if (kill === null && header.pid !== null) kill = killSession(engine, containerId, header.pid, settings.requestTimeoutMs);
  };
  const demux = new FrameDemuxer((stream: OutputStream, bytes: Buffer) => {
    if (stream === "stderr") return output.add(trailer.push(bytes));
    output.add(header.push(bytes));
    // The header came after the time limit (a slow start): kill now.
    if (timedOut) killTree();
  });

  let cut: NodeJS.Timeout | undefined;
  const timer = setTimeout(() => {
    // The command exited in time; only a background child holds the output open.
    if (trailer.seen) return socket.destroy();
    timedOut = true;
    killTree();
    // The grace runs from the kill's end: on a loaded host the kill exec itself can take a while.
    void (kill ?? Promise.resolve()).then(() => {
      cut = setTimeout(() => socket.destroy(), settings.killGraceMs);
    });
  }, options.timeoutMs);
  try {
    await pump(socket, head, demux, options.stdin);
    output.add(header.end());
    output.add(trailer.end());
    let exitCode: number | null = null;
    if (!timedOut) {
      const state = await waitForExit(engine, containerId, execId, () => timedOut, settings.requestTimeoutMs);
      if (!timedOut) exitCode = state.ExitCode;
    }
    clearTimeout(timer);
    if (timedOut) {
      killTree();
      if ((await kill) === "lost") throw lost(containerId);
    }
    // The wrapper dies with its command only when something SIGKILLed it too: the container's
    // end (its init died, it was removed) looks like that, and the daemon may not know yet.
    if (!timedOut && exitCode === 137 && !trailer.seen && (await stopsWithin(engine, containerId, STOP_WAIT_MS))) throw lost(containerId);
    const oomKilled = await sawOomKill(engine, containerId, header.oomCount, trailer, exitCode, settings.requestTimeoutMs);
    return { exitCode, ...output.result(), timedOut, oomKilled, durationMs: Math.round(performance.now() - started) };
  } finally {
    clearTimeout(timer);
    clearTimeout(cut);
    socket.destroy();
  }
}

/**
 * A root command of the provider's own (mkdir, uid lookup, the kill): no wrapper, stdout
 * kept up to 64 KiB, stderr up to 4 KiB; the connection is cut at `timeoutMs`.
 */
export async function runInternal(engine: DockerEngine, containerId: string, argv: readonly string[], timeoutMs: number): Promise<{ exitCode: number | null; stdout: string; stderr: string }> {
  const execId = await createExec(engine, containerId, { Cmd: argv, User: "0", AttachStdout: true, AttachStderr: true, Tty: false }, timeoutMs);
  const { socket, head } = await engine.hijack(`/exec/${execId}/start`, { Detach: false, Tty: false }, timeoutMs).catch((err: unknown) => Promise.reject(toSandboxError(err, "exec start", containerId)));
  const stdout = new OutputCollector(65_536);
  const stderr = new OutputCollector(4_096);
  const timer = setTimeout(() => socket.destroy(), timeoutMs);
  try {
    await pump(socket, head, new FrameDemuxer((stream, bytes) => (stream === "stdout" ? stdout : stderr).add(bytes)), undefined);
    const state = await inspectExec(engine, containerId, execId, timeoutMs);
    return { exitCode: state.Running ? null : state.ExitCode, stdout: stdout.result().output, stderr: stderr.result().output };
  } finally {
    clearTimeout(timer);
    socket.destroy();
  }
}

async function createExec(engine: DockerEngine, containerId: string, body: Record<string, unknown>, timeoutMs: number): Promise<string> {
  try {
    const created = await engine.json<{ Id: string }>("POST", `/containers/${encodeURIComponent(containerId)}/exec`, { json: body, timeoutMs });
    return created.Id;
  } catch (err) {
    throw toSandboxError(err, "exec create", containerId);
  }
}

/**
 * Feeds the connection to `demux` until the daemon ends its side (the output is complete);
 * writes stdin and half-closes when given. The end, not the close: stdin the command never
 * read is still queued on our side then, and would hold the socket open for good.
 */
function pump(socket: Socket, head: Buffer, demux: FrameDemuxer, stdin: string | Uint8Array | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (head.length > 0) demux.push(head);
    socket.on("data", (chunk: Buffer) => demux.push(chunk));
    // A reset (the command exited without reading its stdin, the daemon went away) ends the output like a close.
    socket.on("error", () => undefined);
    socket.on("end", () => resolve());
    socket.on("close", () => resolve());
    if (stdin !== undefined) socket.end(typeof stdin === "string" ? Buffer.from(stdin, "utf8") : Buffer.from(stdin));
  });
}

/**
 * The output closed; the exec has usually exited too, but a command that closed its own
 * stdout and stderr is still running: poll until it exits or the time limit passes.
 */
async function waitForExit(engine: DockerEngine, containerId: string, execId: string, stopped: () => boolean, timeoutMs: number): Promise<ExecInspect> {
  for (let delay = 10; ; delay = Math.min(delay * 2, 250)) {
    const state = await inspectExec(engine, containerId, execId, timeoutMs);
    if (!state.Running || stopped()) return state;
    await sleep(delay);
  }
}

async function inspectExec(engine: DockerEngine, containerId: string, execId: string, timeoutMs: number): Promise<ExecInspect> {
  try {
    return await engine.json<ExecInspect>("GET", `/exec/${execId}/json`, { timeoutMs });
  } catch (err) {
    // Exec instances go with their container: a 404 here means it was removed mid-command.
    if (isEngineStatus(err, 404)) throw new SandboxError("sandbox_lost", `container ${containerId} went away during an exec`, { containerId });
    throw toSandboxError(err, "exec inspect", containerId);
  }
}

/** Whether the container stops (or is gone) within `ms`: the daemon's own wait, cut at the limit. */
async function stopsWithin(engine: DockerEngine, containerId: string, ms: number): Promise<boolean> {
  try {
    await engine.json("POST", `/containers/${encodeURIComponent(containerId)}/wait`, { query: { condition: "not-running" }, timeoutMs: ms });
    return true;
  } catch (err) {
    if (isEngineStatus(err, 404)) return true;
    if (err instanceof DockerEngineError && err.code === "engine_timeout") return false;
    throw toSandboxError(err, "exec", containerId);
  }
}

/** Best effort, but a container that went away is reported: it has no process left to kill, nor a future. */
async function killSession(engine: DockerEngine, containerId: string, pid: number, timeoutMs: number): Promise<"done" | "lost"> {
  try {
    await runInternal(engine, containerId, killArgv(pid), timeoutMs);
    return "done";
  } catch (err) {
    return err instanceof SandboxError && err.code === "sandbox_lost" ? "lost" : "done";
  }
}

function lost(containerId: string): SandboxError {
  return new SandboxError("sandbox_lost", `container ${containerId} stopped during an exec`, { containerId });
}

/**
 * Compares the cgroup's oom_kill count before the command (header) with after (trailer; or,
 * when the wrapper did not live to print it, a second exec). Where the kernel offers no
 * count, the best left is Docker's own flag, which is only set once the container itself died.
 */
async function sawOomKill(engine: DockerEngine, containerId: string, before: number | null, trailer: TrailerFilter, exitCode: number | null, timeoutMs: number): Promise<boolean> {
  if (before !== null) {
    let after = trailer.oomCount;
    if (!trailer.seen) {
      const read = await runInternal(engine, containerId, oomCountArgv(), timeoutMs).catch(() => null);
      after = read ? parseCount(read.stdout.trim()) : null;
    }
    return after !== null && after > before;
  }
  if (exitCode !== 137) return false;
  const state = await engine
    .json<{ State?: { OOMKilled?: boolean } }>("GET", `/containers/${encodeURIComponent(containerId)}/json`, { timeoutMs })
    .catch(() => null);
  return state?.State?.OOMKilled === true;
}

function envList(env: Readonly<Record<string, string>> | undefined): string[] {
  return Object.entries(env ?? {}).map(([key, value]) => `${key}=${value}`);
}
