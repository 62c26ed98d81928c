/**
 * Calls to edgegym's box server (box-server/, Go, the ENTRYPOINT of every Containers image
 * the Worker builds): commands and files of one container over HTTP on its port, each with
 * the box's token. Web APIs only, so it runs in the Durable Object that owns the box.
 *
 * Every answer is checked before it is trusted: the box runs the agent's code as root's
 * neighbour, so a reply that is not what the server writes is a lost box, not data.
 */
import type { BoxAnswer, BoxFailure } from "../../../envs/sandbox/containers-rpc.js";
import type { ExecOptions, ExecResult } from "../../../envs/sandbox/types.js";

/** One HTTP call into the container (the object's TCP port to it). */
export type BoxFetch = (path: string, init: RequestInit) => Promise<Response>;

/** Bytes to base64 in chunks (String.fromCharCode over a whole megabyte overflows the stack). */
export function toBase64(bytes: Uint8Array): string {
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}

export function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

const fail = (code: BoxFailure["code"], message: string): { ok: false; error: BoxFailure } => ({ ok: false, error: { code, message } });

/** The box server's error body, `{"error": {"code", "message"}}`, or the status when it is not one. */
async function errorOf(res: Response): Promise<{ code: string; message: string }> {
  const text = (await res.text()).slice(0, 2000);
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    if (typeof body.error?.code === "string") return { code: body.error.code, message: String(body.error.message ?? "") };
  } catch {
    // Not the server's JSON: reported as the status below.
  }
  return { code: `http_${res.status}`, message: text };
}

/** The box server's answer to POST /exec (box-server/exec.go), as it writes it. */
export interface ExecReply {
  exit_code: number | null;
  output_b64: string;
  output_bytes: number;
  truncated: boolean;
  timed_out: boolean;
  oom_killed: boolean;
  duration_ms: number;
}

function isExecReply(value: unknown): value is ExecReply {
  const r = value as Partial<ExecReply> | null;
  return (
    typeof r === "object" &&
    r !== null &&
    (r.exit_code === null || Number.isInteger(r.exit_code)) &&
    typeof r.output_b64 === "string" &&
    Number.isInteger(r.output_bytes) &&
    typeof r.truncated === "boolean" &&
    typeof r.timed_out === "boolean" &&
    typeof r.oom_killed === "boolean" &&
    typeof r.duration_ms === "number"
  );
}

const decoder = new TextDecoder("utf-8", { fatal: false });

/** Runs `argv` in the box; the box server kills the command's whole session past `timeoutMs`. */
export async function boxExec(call: BoxFetch, token: string, argv: string[], options: ExecOptions, defaults: { user: string | null; workdir: string | null; env: Readonly<Record<string, string>> }): Promise<BoxAnswer<ExecResult>> {
  const env = { ...defaults.env, ...(options.env ?? {}) };
  const user = options.user ?? defaults.user;
  const workdir = options.workdir ?? defaults.workdir;
  const stdin = options.stdin === undefined ? undefined : typeof options.stdin === "string" ? new TextEncoder().encode(options.stdin) : options.stdin;
  const body = {
    argv,
    timeout_ms: Math.max(1, Math.round(options.timeoutMs)),
    max_output_bytes: Math.max(0, Math.round(options.maxOutputBytes)),
    ...(user ? { user } : {}),
    ...(workdir ? { workdir } : {}),
    ...(Object.keys(env).length ? { env } : {}),
    ...(stdin ? { stdin_b64: toBase64(stdin) } : {}),
  };
  const res = await call("/exec", { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  if (!res.ok) {
    const error = await errorOf(res);
    return fail(res.status === 400 ? "bad_request" : "sandbox_lost", `box server: ${error.code}: ${error.message}`);
  }
  const reply: unknown = await res.json().catch(() => null);
  if (!isExecReply(reply)) return fail("sandbox_lost", "box server answered an exec with something that is not its reply");
  return {
    ok: true,
    value: {
      exitCode: reply.exit_code,
      output: decoder.decode(fromBase64(reply.output_b64)),
      outputBytes: reply.output_bytes,
      truncated: reply.truncated,
      timedOut: reply.timed_out,
      oomKilled: reply.oom_killed,
      durationMs: reply.duration_ms,
    },
  };
}

export async function boxReadFile(call: BoxFetch, token: string, path: string, maxBytes: number): Promise<BoxAnswer<Uint8Array>> {
  const query = new URLSearchParams({ path, max_bytes: String(Math.max(0, Math.floor(maxBytes))) });
  const res = await call(`/file?${query}`, { method: "GET", headers: { authorization: `Bearer ${token}` } });
  if (res.ok) return { ok: true, value: new Uint8Array(await res.arrayBuffer()) };
  const error = await errorOf(res);
  if (error.code === "file_not_found" || error.code === "file_too_large") return fail(error.code, `${path}: ${error.message}`);
  if (res.status === 400) return fail("bad_request", `${path}: ${error.code}: ${error.message}`);
  return fail("sandbox_lost", `box server: ${error.code}: ${error.message}`);
}

export async function boxWriteFile(call: BoxFetch, token: string, path: string, data: Uint8Array, options: { mode?: number; user?: string }): Promise<BoxAnswer<null>> {
  const query = new URLSearchParams({ path, ...(options.mode === undefined ? {} : { mode: options.mode.toString(8) }), ...(options.user ? { user: options.user } : {}) });
  const res = await call(`/file?${query}`, { method: "PUT", headers: { authorization: `Bearer ${token}`, "content-type": "application/octet-stream" }, body: new Uint8Array(data) });
  if (res.ok) return { ok: true, value: null };
  const error = await errorOf(res);
  return fail(res.status === 400 ? "bad_request" : "sandbox_lost", `box server: ${error.code}: ${error.message}`);
}

export async function boxWriteFiles(call: BoxFetch, token: string, dir: string, files: readonly { relativePath: string; mode: number; bytes: Uint8Array }[]): Promise<BoxAnswer<null>> {
  const body = { files: files.map((f) => ({ path: f.relativePath, mode: f.mode, data_b64: toBase64(f.bytes) })) };
  const res = await call(`/files?${new URLSearchParams({ dir })}`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  if (res.ok) return { ok: true, value: null };
  const error = await errorOf(res);
  return fail(res.status === 400 ? "bad_request" : "sandbox_lost", `box server: ${error.code}: ${error.message}`);
}
