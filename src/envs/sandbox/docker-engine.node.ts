import http from "node:http";
import type { Socket } from "node:net";
import { pipeline, type Readable } from "node:stream";

/** `engine_unreachable`: no daemon at the socket. `engine_timeout`: a request ran past its limit. `engine_status`: the daemon answered with an error status (`status`, its `message`). `engine_protocol`: an answer that is not what the API documents. */
export type DockerEngineErrorCode = "engine_unreachable" | "engine_timeout" | "engine_status" | "engine_protocol";

/** Every failure of an Engine call, with a stable code (the provider maps them to `SandboxError`s). */
export class DockerEngineError extends Error {
  constructor(
    readonly code: DockerEngineErrorCode,
    message: string,
    /** HTTP status, for `engine_status`. */
    readonly status?: number,
  ) {
    super(message);
    this.name = "DockerEngineError";
  }
}

/** True when `err` is the daemon answering `status`. */
export function isEngineStatus(err: unknown, status: number): err is DockerEngineError {
  return err instanceof DockerEngineError && err.code === "engine_status" && err.status === status;
}

/** Where the daemon is and how long a call may take. */
export interface DockerEngineOptions {
  /** Unix socket of the daemon; default from `DOCKER_HOST` (`unix://` only), else /var/run/docker.sock. */
  socketPath?: string;
  /** API version prefix; 1.41 is Docker 20.10's, which newer daemons still serve. */
  apiVersion?: string;
  /** Limit of a request that names none, in ms (default 30 s). */
  timeoutMs?: number;
}

type Query = Readonly<Record<string, string | number | boolean | undefined>>;

/** One call's query, body and time limit. */
export interface EngineRequest {
  query?: Query;
  /** Sent as JSON. */
  json?: unknown;
  /** Sent as is, with this content type (tar archives). */
  raw?: { body: Buffer | Readable; contentType: string };
  timeoutMs?: number;
}

/** The socket `DOCKER_HOST` names (only `unix://`: the provider never talks TCP to a daemon). */
export function dockerSocketPath(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const host = env.DOCKER_HOST;
  if (!host) return "/var/run/docker.sock";
  if (host.startsWith("unix://")) return host.slice("unix://".length);
  throw new DockerEngineError("engine_unreachable", `DOCKER_HOST=${host}: only unix:// sockets are supported`);
}

const UNREACHABLE = new Set(["ENOENT", "ECONNREFUSED", "EACCES", "ECONNRESET", "EPIPE"]);

/**
 * A small Docker Engine API client over `node:http` on the daemon's unix socket: JSON calls,
 * streamed bodies (build progress, archives) and hijacked connections (exec). Chosen over
 * dockerode, whose v5 pulls grpc-js, protobufjs and ssh2 for the ~12 endpoints the sandbox
 * provider uses. Every request has a time limit; every failure is a `DockerEngineError`.
 *
 * @example
 * const engine = new DockerEngine();
 * const info = await engine.json<{ ServerVersion: string }>("GET", "/info");
 */
export class DockerEngine {
  readonly socketPath: string;
  private readonly prefix: string;
  private readonly timeoutMs: number;
  private readonly agent: http.Agent;

  constructor(options: DockerEngineOptions = {}) {
    this.socketPath = options.socketPath ?? dockerSocketPath();
    this.prefix = `/v${options.apiVersion ?? "1.41"}`;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
  }

  /** A JSON call; the answer's body parsed (the Engine's documented shape, trusted as `T`), or undefined when empty. */
  async json<T>(method: string, path: string, request: EngineRequest = {}): Promise<T> {
    const { response, done } = await this.stream(method, path, request);
    try {
      const text = await readText(response);
      if (text.trim() === "") return undefined as T;
      try {
        return JSON.parse(text) as T;
      } catch {
        throw new DockerEngineError("engine_protocol", `${method} ${path}: not JSON: ${text.slice(0, 200)}`);
      }
    } finally {
      done();
    }
  }

  /**
   * A call whose answer is read as a stream. Resolves once a success status arrives (an error
   * status throws, with the daemon's message). The time limit covers reading the body too:
   * past it the response stream fails with `engine_timeout`. Call `done` when finished
   * (it clears the timer), or `abort` to cut the connection (the daemon cancels a build then).
   */
  stream(method: string, path: string, request: EngineRequest = {}): Promise<{ response: http.IncomingMessage; done: () => void; abort: () => void }> {
    const timeoutMs = request.timeoutMs ?? this.timeoutMs;
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = {};
      let body: Buffer | Readable | undefined;
      if (request.json !== undefined) {
        body = Buffer.from(JSON.stringify(request.json));
        headers["Content-Type"] = "application/json";
      } else if (request.raw) {
        body = request.raw.body;
        headers["Content-Type"] = request.raw.contentType;
      }
      if (Buffer.isBuffer(body)) headers["Content-Length"] = String(body.length);
      const req = http.request({ socketPath: this.socketPath, agent: this.agent, method, path: this.url(path, request.query), headers });
      let answer: http.IncomingMessage | undefined;
      // Destroying the response too makes its readers see this error, not a bare "aborted".
      const cut = (message: string): void => {
        const err = new DockerEngineError("engine_timeout", `${method} ${path}: ${message}`);
        answer?.destroy(err);
        req.destroy(err);
      };
      const timer = setTimeout(() => cut(`no answer within ${timeoutMs} ms`), timeoutMs);
      const done = (): void => clearTimeout(timer);
      req.on("error", (err) => {
        done();
        reject(toEngineError(err, method, path));
      });
      req.on("response", (response) => {
        answer = response;
        const status = response.statusCode ?? 0;
        if (status >= 400) {
          readText(response).then(
            (text) => {
              done();
              reject(new DockerEngineError("engine_status", `${method} ${path}: ${status} ${daemonMessage(text)}`, status));
            },
            (err: unknown) => {
              done();
              reject(toEngineError(err, method, path));
            },
          );
          return;
        }
        // Read to the end, failed or destroyed by the caller: the timer has nothing left to guard.
        response.on("close", done);
        resolve({
          response,
          done,
          abort: () => {
            done();
            cut("aborted");
          },
        });
      });
      if (body === undefined) req.end();
      else if (Buffer.isBuffer(body)) req.end(body);
      // pipeline: a request cut short (time limit, abort) also stops the body's producer.
      else pipeline(body, req, (err) => err && req.destroy(err));
    });
  }

  /**
   * POSTs `json` with `Connection: Upgrade` and hands over the raw connection the daemon
   * upgrades to (exec start: multiplexed output in, stdin out). The limit covers only the
   * upgrade; the caller owns the socket's time after that. `head`: bytes already read past
   * the upgrade's headers.
   */
  hijack(path: string, json: unknown, timeoutMs = this.timeoutMs): Promise<{ socket: Socket; head: Buffer }> {
    return new Promise((resolve, reject) => {
      const body = Buffer.from(JSON.stringify(json));
      const req = http.request({
        socketPath: this.socketPath,
        agent: false,
        method: "POST",
        path: this.url(path),
        headers: { "Content-Type": "application/json", "Content-Length": String(body.length), Connection: "Upgrade", Upgrade: "tcp" },
      });
      const timer = setTimeout(() => req.destroy(new DockerEngineError("engine_timeout", `POST ${path}: no upgrade within ${timeoutMs} ms`)), timeoutMs);
      req.on("error", (err) => {
        clearTimeout(timer);
        reject(toEngineError(err, "POST", path));
      });
      req.on("upgrade", (_response, socket, head) => {
        clearTimeout(timer);
        resolve({ socket, head });
      });
      req.on("response", (response) => {
        const status = response.statusCode ?? 0;
        readText(response).then(
          (text) => {
            clearTimeout(timer);
            if (status >= 400) reject(new DockerEngineError("engine_status", `POST ${path}: ${status} ${daemonMessage(text)}`, status));
            else reject(new DockerEngineError("engine_protocol", `POST ${path}: expected an upgrade, got ${status}`));
          },
          (err: unknown) => {
            clearTimeout(timer);
            reject(toEngineError(err, "POST", path));
          },
        );
      });
      req.end(body);
    });
  }

  /** Closes pooled keep-alive connections (tests, shutdown). */
  close(): void {
    this.agent.destroy();
  }

  private url(path: string, query?: Query): string {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query ?? {})) if (value !== undefined) params.set(key, String(value));
    const search = params.toString();
    return `${this.prefix}${path}${search ? `?${search}` : ""}`;
  }
}

async function readText(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** The daemon's `{"message": …}`, or the body's start. */
function daemonMessage(text: string): string {
  try {
    const parsed = JSON.parse(text) as { message?: unknown };
    if (typeof parsed.message === "string") return parsed.message;
  } catch {
    // not JSON: fall through to the raw text
  }
  return text.slice(0, 500).trim();
}

function toEngineError(err: unknown, method: string, path: string): DockerEngineError {
  if (err instanceof DockerEngineError) return err;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const message = err instanceof Error ? err.message : String(err);
  if (code && UNREACHABLE.has(code)) return new DockerEngineError("engine_unreachable", `${method} ${path}: ${message}`);
  return new DockerEngineError("engine_protocol", `${method} ${path}: ${message}`);
}
