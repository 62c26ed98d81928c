// The console's one transport: same-origin fetch to /v1 with the key kept in sessionStorage
// (never in a URL, never in localStorage: it goes when the tab closes).
import type { ErrorBody } from "../../src/protocol/index.js";

const KEY_ITEM = "edgegym.apiKey";

export function apiKey(): string | null {
  return sessionStorage.getItem(KEY_ITEM);
}

export function setApiKey(key: string | null): void {
  if (key) sessionStorage.setItem(KEY_ITEM, key);
  else sessionStorage.removeItem(KEY_ITEM);
}

/** An error body from the server (`{error: {code, message}}`), or a transport failure as `network_error`. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The error body's `details` (a seat error's `to_play`, `seats`…), when it had any. */
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** Listeners told when the server asks for a key (401), so the shell can show the key form. */
const unauthorizedListeners = new Set<() => void>();
export function onUnauthorized(listener: () => void): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

export function authHeaders(): Record<string, string> {
  const key = apiKey();
  return key ? { Authorization: `Bearer ${key}` } : {};
}

export async function api<T>(method: "GET" | "POST" | "DELETE", path: string, body?: unknown): Promise<T> {
  return JSON.parse(await apiText(method, path, body)) as T;
}

/** The body as text (JSON Lines answers); errors as for `api`. */
export async function apiText(method: "GET" | "POST" | "DELETE", path: string, body?: unknown): Promise<string> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers: { ...authHeaders(), ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (err) {
    throw new ApiFailure(0, "network_error", `the server did not answer: ${String(err)}`);
  }
  const text = await res.text();
  if (!res.ok) {
    let code = "http_error";
    let message = `${res.status} ${res.statusText}`;
    let details: Record<string, unknown> | undefined;
    try {
      const parsed = JSON.parse(text) as Partial<ErrorBody>;
      if (parsed.error) {
        ({ code, message } = parsed.error);
        const d = parsed.error.details;
        if (d && typeof d === "object" && !Array.isArray(d)) details = d as Record<string, unknown>;
      }
    } catch {
      // not our error body (a proxy's page): keep the status line
    }
    if (res.status === 401) for (const l of unauthorizedListeners) l();
    throw new ApiFailure(res.status, code, message, details);
  }
  return text;
}

export function errorText(err: unknown): string {
  if (err instanceof ApiFailure) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}
