import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../context.js";

/*
 * ORS's reference server is FastAPI, and its client reads an error's text from `detail`
 * (openreward/api/_session/http.py, `_raise_for_status`): the message it raises with. So
 * an error on this wire is `{"detail": "<message>", "code", "request_id", "details"?}`:
 * the message where the client looks, edgegym's stable code and request id beside it.
 * Validation failures (422) keep FastAPI's list form (openenv/errors.ts `validationDetail`).
 */

/**
 * Rewrites edgegym's error body (`{"error": {code, message, request_id, details?}}`),
 * whoever produced it (auth, body limits, a handler, not-found), into the ORS shape,
 * keeping the status and headers (WWW-Authenticate, Retry-After, Allow).
 */
export function orsErrorShape(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await next();
    const res = c.res;
    if (res.status < 400 || !(res.headers.get("content-type") ?? "").includes("application/json")) return;
    const body = (await res.clone().json()) as unknown;
    if (!body || typeof body !== "object" || !("error" in body) || !body.error || typeof body.error !== "object") return;
    const { message, ...rest } = body.error as { message?: unknown };
    const headers = new Headers(res.headers);
    headers.delete("content-length");
    c.res = undefined;
    c.res = new Response(JSON.stringify({ detail: message, ...rest }), { status: res.status, headers });
  };
}
