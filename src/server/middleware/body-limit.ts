import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { AppEnv } from "../context.js";
import { ApiError, errorResponse } from "../errors.js";

/**
 * Rejects bodies over `maxBytes` with 413 `payload_too_large`, before they are parsed.
 * A request with a Content-Length (and no Transfer-Encoding) is judged by that header
 * alone; any other body is counted as it streams (hono's bodyLimit), so leaving out
 * Content-Length is no way around the limit. The header check comes first because on
 * Node merely asking for `req.raw.body`, as hono's bodyLimit does, builds a full web
 * Request around the socket stream: measured at about a tenth of a step's server time
 * (docs/performance.md). GET and HEAD carry no body and pass straight through.
 * The reply says `Connection: close`: the rest of the body is never read, and on Node
 * the server drops such a connection half a second later, so a client that reused it
 * for its next request would see that request fail.
 */
export function limitBody(maxBytes: number): MiddlewareHandler<AppEnv> {
  const tooLarge = (c: Parameters<typeof errorResponse>[0]) =>
    errorResponse(c, new ApiError("payload_too_large", `request body exceeds the server's limit of ${maxBytes} bytes`, { limit_bytes: maxBytes }, { Connection: "close" }));
  const streamed = bodyLimit({ maxSize: maxBytes, onError: (c) => tooLarge(c as Parameters<typeof errorResponse>[0]) });
  return async (c, next) => {
    const method = c.req.method;
    if (method === "GET" || method === "HEAD") return next();
    const length = c.req.header("content-length");
    if (length !== undefined && c.req.header("transfer-encoding") === undefined) {
      return Number(length) > maxBytes ? tooLarge(c) : next();
    }
    return streamed(c, next);
  };
}
