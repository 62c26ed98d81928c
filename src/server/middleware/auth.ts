import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../context.js";
import { ApiError, errorResponse } from "../errors.js";

/** Compares without an early exit, so response time does not reveal a key's prefix. */
function sameText(a: string, b: string): boolean {
  const x = new TextEncoder().encode(a);
  const y = new TextEncoder().encode(b);
  let diff = x.length ^ y.length;
  for (let i = 0; i < Math.max(x.length, y.length); i++) diff |= (x[i % (x.length || 1)] ?? 0) ^ (y[i % (y.length || 1)] ?? 0);
  return diff === 0;
}

/**
 * Requires `Authorization: Bearer <key>` with one of `keys`. With no keys configured
 * it lets everything through (a local server needs no set-up).
 *
 * @example app.use("/v1/*", bearerAuth({ keys: ["sk-local"] }))
 */
export function bearerAuth(options: { keys: readonly string[] }): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (options.keys.length === 0) return next();
    const header = c.req.header("authorization") ?? "";
    const match = /^Bearer\s+(.+)$/i.exec(header);
    const token = match?.[1]?.trim();
    if (!token) {
      return errorResponse(c, new ApiError("unauthorized", "this server requires an API key: send `Authorization: Bearer <key>`", undefined, { "WWW-Authenticate": "Bearer" }));
    }
    let ok = false;
    for (const key of options.keys) ok = sameText(token, key) || ok;
    if (!ok) return errorResponse(c, new ApiError("unauthorized", "API key not recognised", undefined, { "WWW-Authenticate": "Bearer" }));
    return next();
  };
}
