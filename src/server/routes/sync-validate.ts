import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { z } from "@hono/zod-openapi";
import type { AppEnv } from "../context.js";
import { validationError } from "../errors.js";

// The same tests @hono/zod-openapi and hono's validator apply to a required JSON body.
const JSON_REQUEST = /^application\/([a-z-.]+\+)?json(;\s*[a-zA-Z0-9-]+=([^;]+))*$/i;
const JSON_MEDIA = /^application\/([\w.-]+\+)?json$/i;

/**
 * A route's parameters or body checked with zod's synchronous parse, answering exactly as
 * the route's generated validators do (the same `invalid_request` body, through onError).
 *
 * Why: `app.openapi` validates through @hono/zod-validator, which calls `safeParseAsync`,
 * and zod 4 runs its compiled fast path only for synchronous parses: the async parse of a
 * step body measured about 3× the sync one, and each validator is one more async layer of
 * middleware. Used on the step route, the hottest one; the route is still registered in
 * the OpenAPI document from the same `createRoute` definition.
 */
export function parseSync<S extends z.ZodType>(schema: S, value: unknown, target: "param" | "json"): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw validationError(result.error, `request ${target}`);
  return result.data;
}

/**
 * The body of a route whose JSON body is required, read as the generated validators read
 * it: another declared media type is 415, a JSON one that does not parse is 400
 * (`malformed_json` through onError), and a request without a JSON content type reads as
 * `{}` (so the schema, not the reader, says what is missing).
 */
export async function requiredJsonBody(c: Context<AppEnv>): Promise<unknown> {
  const type = c.req.header("content-type");
  // Without a content type, the JSON guard middleware (json-body.ts) has already refused a non-empty body.
  if (type === undefined) return {};
  if (!JSON_REQUEST.test(type)) throw new HTTPException(415, { message: "Unsupported Media Type" });
  if (!JSON_MEDIA.test((type.split(";")[0] ?? "").trim())) return {};
  try {
    return (await c.req.json()) as unknown;
  } catch {
    throw new HTTPException(400, { message: "Malformed JSON in request body" });
  }
}
