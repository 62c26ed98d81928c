import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { AppEnv } from "../context.js";
import { ApiError, errorResponse } from "../errors.js";

/**
 * Rejects bodies over `maxBytes` with 413 `payload_too_large`, before they are parsed
 * (hono's bodyLimit counts the stream, so a missing Content-Length is no way around it).
 * The reply says `Connection: close`: the rest of the body is never read, and on Node
 * the server drops such a connection half a second later, so a client that reused it
 * for its next request would see that request fail.
 */
export function limitBody(maxBytes: number): MiddlewareHandler<AppEnv> {
  return bodyLimit({
    maxSize: maxBytes,
    onError: (c) =>
      errorResponse(c as Parameters<typeof errorResponse>[0], new ApiError("payload_too_large", `request body exceeds the server's limit of ${maxBytes} bytes`, { limit_bytes: maxBytes }, { Connection: "close" })),
  });
}
