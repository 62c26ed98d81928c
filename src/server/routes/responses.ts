import type { TypedResponse } from "hono";
import type { ResponseFormat } from "hono/types";
import { ErrorBody, type ErrorCode, ERROR_STATUS } from "../../protocol/index.js";

/**
 * OpenAPI response entries for the error codes a route can return, grouped by status. A route
 * that takes a JSON body (it lists `malformed_json`) also answers the checks every body goes
 * through first (middleware/json-body.ts): 415 and too-deep JSON.
 */
export function errorResponses(...codes: ErrorCode[]) {
  const byStatus = new Map<number, ErrorCode[]>();
  const bodyChecks: ErrorCode[] = codes.includes("malformed_json") ? ["json_too_deep", "unsupported_media_type"] : [];
  for (const code of [...codes, ...bodyChecks, "invalid_request", "unauthorized", "internal_error"] as ErrorCode[]) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...new Set([...(byStatus.get(status) ?? []), code])]);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, list]) => [status, { description: `Error: ${list.map((c) => `\`${c}\``).join(", ")}.`, content: { "application/json": { schema: ErrorBody } } }]),
  ) as Record<number, { description: string; content: { "application/json": { schema: typeof ErrorBody } } }>;
}

export const json = <T>(schema: T) => ({ "application/json": { schema } });

/**
 * A body the handler does not build from an object — the stored bytes of a step reply, an
 * SSE or NDJSON stream — typed as what its route declares. The service wrote those bytes
 * from that type (T), so the route keeps its typed contract instead of an `as never` that
 * would hide any mismatch of the handler's other returns.
 */
export function preserialized<T, F extends ResponseFormat = "json">(res: Response): TypedResponse<T, 200, F> {
  return res as unknown as TypedResponse<T, 200, F>;
}

/**
 * The NDJSON stream of eval rollouts. Hono types a JSON response whose schema has open keys
 * (EvalRollout keeps verifiers' extra columns) as `never`, so no value can satisfy that
 * route's handler type; the one unavoidable cast lives here, named, not at the route.
 */
export function ndjsonStream(res: Response): never {
  return res as never;
}
