import { ErrorBody, type ErrorCode, ERROR_STATUS } from "../../protocol/index.js";

/** OpenAPI response entries for the error codes a route can return, grouped by status. */
export function errorResponses(...codes: ErrorCode[]) {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of [...codes, "invalid_request", "unauthorized", "internal_error"] as ErrorCode[]) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...new Set([...(byStatus.get(status) ?? []), code])]);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, list]) => [status, { description: `Error: ${list.map((c) => `\`${c}\``).join(", ")}.`, content: { "application/json": { schema: ErrorBody } } }]),
  ) as Record<number, { description: string; content: { "application/json": { schema: typeof ErrorBody } } }>;
}

export const json = <T>(schema: T) => ({ "application/json": { schema } });
