import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { ZodError } from "zod";
import { ERROR_STATUS, type ErrorBody, type ErrorCode } from "../protocol/index.js";
import { EngineError } from "../envs/index.js";
import type { AppEnv } from "./context.js";

/** An error the API reports as data: a stable code, its one status, a message that says how to fix it. */
export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = "ApiError";
  }

  get status(): ContentfulStatusCode {
    return ERROR_STATUS[this.code] as ContentfulStatusCode;
  }
}

export function errorResponse(c: Context<AppEnv>, err: ApiError): Response {
  const body: ErrorBody = {
    error: {
      code: err.code,
      message: err.message,
      request_id: c.get("requestId") ?? "unknown",
      ...(err.details === undefined ? {} : { details: err.details }),
    },
  };
  return c.json(body, err.status, err.headers);
}

/** zod's issues as a short sentence plus the structured list. */
export function validationError(error: ZodError, where: string): ApiError {
  const summary = error.issues
    .slice(0, 5)
    .map((i) => `${i.path.length ? i.path.join(".") : "(root)"}: ${i.message}`)
    .join("; ");
  return new ApiError("invalid_request", `invalid ${where}: ${summary}`, {
    issues: error.issues.map((i) => ({ path: i.path, message: i.message, code: i.code })),
  });
}

/** Maps anything thrown in a handler to the error body; unknown failures are 500 and logged. */
export function handleError(err: unknown, c: Context<AppEnv>): Response {
  if (err instanceof ApiError) return errorResponse(c, err);
  if (err instanceof EngineError) {
    // An environment's own admission (a sandbox cap) says when to come back; 429 and 503 always carry Retry-After.
    const after = (err.details as { retry_after_seconds?: unknown } | undefined)?.retry_after_seconds;
    const retry = err.code === "rate_limited" || err.code === "service_unavailable" || err.code === "sandbox_start_failed" ? { "Retry-After": String(typeof after === "number" ? Math.max(1, Math.ceil(after)) : 5) } : undefined;
    return errorResponse(c, new ApiError(err.code, err.message, err.details, retry));
  }
  if (err instanceof HTTPException) {
    if (err.status === 413) return errorResponse(c, new ApiError("payload_too_large", err.message || "request body too large"));
    if (err.status === 400) {
      // Hono's JSON validator throws this for a body that does not parse.
      return errorResponse(c, new ApiError("malformed_json", `request body is not valid JSON: ${err.message}`));
    }
    if (err.status === 415) return errorResponse(c, new ApiError("unsupported_media_type", "request bodies must be JSON: send Content-Type: application/json"));
    if (err.status === 401) return errorResponse(c, new ApiError("unauthorized", err.message));
  }
  if (c.req.raw.signal?.aborted) {
    // The client closed the connection and the work stopped on purpose (a step's tools were
    // killed, nothing stored): not a server fault, and nobody is left to read the reply.
    console.warn(`[${c.get("requestId")}] client went away; ${c.req.method} ${new URL(c.req.url).pathname} abandoned, nothing stored`);
    return errorResponse(c, new ApiError("service_unavailable", "the client closed the connection before the reply; nothing was stored"));
  }
  console.error(`[${c.get("requestId")}]`, err);
  return errorResponse(c, new ApiError("internal_error", "internal error; the request id identifies it in the server log"));
}
