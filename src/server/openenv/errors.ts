import type { MiddlewareHandler } from "hono";
import type { ZodError } from "zod";
import type { ErrorCode } from "../../protocol/index.js";
import type { OpenEnvWsErrorCode } from "../../protocol/openenv.js";
import type { AppEnv } from "../context.js";
import { ApiError } from "../errors.js";
import { EngineError } from "../../envs/index.js";

/*
 * OpenEnv's server is FastAPI, so its HTTP errors are `{"detail": …}`: a list of
 * {type, loc, msg} for a request that fails validation (422), anything else for the rest.
 * edgegym keeps its stable code and status inside `detail`; its WebSocket errors are
 * `{"type": "error", "data": {"message", "code"}}` with openenv-core's WSErrorCode.
 */

/** A body or message that fails validation, as FastAPI answers it: 422 with pydantic-style entries. */
export function validationDetail(error: ZodError, where: "body" | "query"): { detail: { type: string; loc: (string | number)[]; msg: string }[] } {
  return {
    detail: error.issues.slice(0, 20).map((issue) => ({
      type: issue.code,
      loc: [where, ...issue.path.map((p) => (typeof p === "symbol" ? String(p) : p))],
      msg: issue.message,
    })),
  };
}

/**
 * Rewrites edgegym's error body (`{"error": {code, message, request_id, details?}}`),
 * whoever produced it (auth, body limits, a handler, not-found), into OpenEnv's
 * `{"detail": {code, message, request_id, details?}}`, keeping the status and headers
 * (WWW-Authenticate, Retry-After, Allow).
 */
export function openEnvErrorShape(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await next();
    const res = c.res;
    if (res.status < 400 || !(res.headers.get("content-type") ?? "").includes("application/json")) return;
    const body = (await res.clone().json()) as unknown;
    if (!body || typeof body !== "object" || !("error" in body) || typeof body.error !== "object") return;
    const headers = new Headers(res.headers);
    headers.delete("content-length");
    c.res = undefined;
    c.res = new Response(JSON.stringify({ detail: body.error }), { status: res.status, headers });
  };
}

/** Codes of a request that is wrong in itself (the seat codes included), as opposed to one the episode's state refuses (not your turn, a conflict). */
const VALIDATION_CODES = new Set<ErrorCode>([
  "invalid_request",
  "malformed_json",
  "json_too_deep",
  "invalid_message",
  "invalid_env_args",
  "task_out_of_range",
  "payload_too_large",
  "unknown_seat",
  "unknown_policy",
  "seats_unsupported",
  "seat_required",
  "no_client_seat",
  "seat_mismatch",
  "client_seats_unsupported",
]);

/** A WebSocket error frame for anything a session's handler threw; unknown failures are logged, not shown. */
export function wsErrorFrame(err: unknown, requestId: string): string {
  let api: ApiError | undefined;
  if (err instanceof ApiError) api = err;
  else if (err instanceof EngineError) api = new ApiError(err.code, err.message, err.details);
  if (!api) {
    console.error(`[${requestId}] openenv websocket:`, err);
    return wsFrame("EXECUTION_ERROR", "internal error; the request id identifies it in the server log", { edgegym_code: "internal_error", request_id: requestId });
  }
  const code: OpenEnvWsErrorCode = VALIDATION_CODES.has(api.code) ? "VALIDATION_ERROR" : api.code === "rate_limited" ? "CAPACITY_REACHED" : "EXECUTION_ERROR";
  return wsFrame(code, api.message, { edgegym_code: api.code, request_id: requestId, ...(api.details === undefined ? {} : { details: api.details }) });
}

/** `{"type": "error", "data": {"message", "code", …}}`: what openenv-core's client raises as "Server error: … (code: …)". */
export function wsFrame(code: OpenEnvWsErrorCode, message: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ type: "error", data: { message, code, ...extra } });
}
