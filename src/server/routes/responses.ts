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
 * The NDJSON stream of eval rollouts. Hono types a JSON response whose schema has open keys
 * (EvalRollout keeps verifiers' extra columns) as `never`, so no value can satisfy that
 * route's handler type; the one unavoidable cast lives here, named, not at the route.
 */
export function ndjsonStream(res: Response): never {
  return res as never;
}
