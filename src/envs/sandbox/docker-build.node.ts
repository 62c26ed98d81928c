import { stat } from "node:fs/promises";
import type { Readable } from "node:stream";
import { DockerEngineError, type DockerEngine } from "./docker-engine.node.js";
import { packDirectory } from "./docker-tar.node.js";
import { SandboxError } from "./types.js";

/** A build's time limit, image labels and Dockerfile. */
export interface BuildOptions {
  timeoutMs: number;
  /** Labels of the image (for sweeps of images a server built). */
  labels?: Record<string, string>;
  /** Dockerfile path inside the context (default "Dockerfile"). */
  dockerfile?: string;
}

/** What a build made: the tag, its content address, its log. */
export interface BuiltImage {
  /** The tag, as asked. */
  image: string;
  /** The image id (`sha256:…`), its content address. */
  digest: string;
  /** The build's output, its last 256 KiB. */
  log: string;
}

const LOG_MAX = 256 * 1024;
const LOG_TAIL = 4 * 1024;

interface BuildMessage {
  stream?: string;
  status?: string;
  error?: string;
  errorDetail?: { message?: string };
  aux?: { ID?: string };
}

/**
 * `docker build` through the Engine API: the context directory streamed as a tar, the JSON
 * progress stream read to its end, a failure (`errorDetail`) or a time limit turned into
 * `sandbox_build_failed` with the log's tail. Past the limit the connection is cut, which
 * makes the daemon cancel the build; `forcerm` removes its intermediate containers either way.
 *
 * @example await buildImage(engine, "tasks/fix-bug/environment", "edgegym/task-fix-bug:1", { timeoutMs: 600_000 })
 */
export async function buildImage(engine: DockerEngine, contextDir: string, tag: string, options: BuildOptions): Promise<BuiltImage> {
  const info = await stat(contextDir).catch(() => null);
  if (!info?.isDirectory()) throw new SandboxError("sandbox_build_failed", `build context ${contextDir} is not a directory`, { tag, contextDir });
  const log = new BoundedLog(LOG_MAX);
  const started = performance.now();
  let imageId: string | undefined;
  try {
    const { response } = await engine.stream("POST", "/build", {
      query: { t: tag, dockerfile: options.dockerfile, labels: options.labels ? JSON.stringify(options.labels) : undefined, rm: true, forcerm: true },
      raw: { body: packDirectory(contextDir), contentType: "application/x-tar" },
      timeoutMs: options.timeoutMs,
    });
    for await (const message of jsonLines(response)) {
      if (message.stream) log.append(message.stream);
      else if (message.status) log.append(`${message.status}\n`);
      if (message.aux?.ID) imageId = message.aux.ID;
      if (message.errorDetail || message.error) {
        const reason = message.errorDetail?.message ?? message.error ?? "unknown error";
        log.append(`${reason}\n`);
        throw new SandboxError("sandbox_build_failed", `build of ${tag} failed: ${reason}`, { tag, logTail: log.tail(LOG_TAIL) });
      }
    }
  } catch (err) {
    if (err instanceof SandboxError) throw err;
    if (err instanceof DockerEngineError && err.code === "engine_unreachable") throw new SandboxError("sandbox_unavailable", `build of ${tag}: ${err.message}`, { tag });
    const timedOut = err instanceof DockerEngineError && err.code === "engine_timeout";
    const reason = timedOut ? `no result within ${options.timeoutMs} ms (cancelled)` : err instanceof Error ? err.message : String(err);
    throw new SandboxError("sandbox_build_failed", `build of ${tag} failed: ${reason}`, { tag, timedOut, elapsedMs: Math.round(performance.now() - started), logTail: log.tail(LOG_TAIL) });
  }
  // The legacy builder reports the id in an `aux` message; otherwise ask for the tag.
  const digest = imageId ?? (await engine.json<{ Id: string }>("GET", `/images/${encodeURIComponent(tag)}/json`)).Id;
  return { image: tag, digest, log: log.text() };
}

/** The progress stream's JSON objects (one per line; a line that is not JSON is skipped). */
async function* jsonLines(stream: Readable): AsyncGenerator<BuildMessage> {
  let pending = "";
  for await (const chunk of stream) {
    pending += (chunk as Buffer).toString("utf8");
    const lines = pending.split(/\r?\n/);
    pending = lines.pop() ?? "";
    for (const line of lines) {
      const parsed = parseLine(line);
      if (parsed) yield parsed;
    }
  }
  const last = parseLine(pending);
  if (last) yield last;
}

function parseLine(line: string): BuildMessage | null {
  if (line.trim() === "") return null;
  try {
    return JSON.parse(line) as BuildMessage;
  } catch {
    return null;
  }
}

/** Text that keeps only its last `max` characters. */
class BoundedLog {
  private value = "";
  constructor(private readonly max: number) {}
  append(text: string): void {
    this.value += text;
    if (this.value.length > this.max * 2) this.value = this.value.slice(-this.max);
  }
  text(): string {
    return this.value.slice(-this.max);
  }
  tail(chars: number): string {
    return this.value.slice(-chars);
  }
}
