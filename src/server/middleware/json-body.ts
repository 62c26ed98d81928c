import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../context.js";
import { ApiError, errorResponse } from "../errors.js";

/** Deepest nesting of arrays and objects a request body may have (documented in docs/security-wire.md). */
export const MAX_JSON_DEPTH = 64;

/**
 * Keys refused anywhere in a body. JSON.parse makes them plain own properties, but code that
 * copies or merges the value (spread, Object.assign, a validator's output) can turn `__proto__`
 * into a prototype change, and zod drops it silently from records while unknown fields are
 * otherwise rejected; refusing them is the one rule that holds everywhere.
 */
const FORBIDDEN_KEYS = new Set(["__proto__", "constructor", "prototype"]);

const JSON_TYPE = /^application\/([a-z0-9.+-]+\+)?json\s*(;.*)?$/i;

/** Nesting depth of a JSON text, counted without parsing (strings skipped), so no parser or walker ever sees a deeper one. */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 92 /* \ */) i++;
      else if (ch === 34 /* " */) inString = false;
    } else if (ch === 34) inString = true;
    else if (ch === 123 /* { */ || ch === 91 /* [ */) {
      if (++depth > max) max = depth;
    } else if (ch === 125 /* } */ || ch === 93 /* ] */) depth--;
  }
  return max;
}

/**
 * The path of the first forbidden key in a parsed value (depth already bounded), or
 * undefined. The path is built only on the way back from a find, so a clean body (every
 * request) allocates nothing per node.
 */
export function findForbiddenKey(value: unknown): (string | number)[] | undefined {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findForbiddenKey(value[i]);
      if (found) return [i, ...found];
    }
  } else if (value !== null && typeof value === "object") {
    for (const key in value) {
      if (FORBIDDEN_KEYS.has(key)) return [key];
      const found = findForbiddenKey((value as Record<string, unknown>)[key]);
      if (found) return [key, ...found];
    }
  }
  return undefined;
}

/**
 * Checks every request body before a route sees it: a body must be JSON (else 415
 * `unsupported_media_type`, e.g. a plain `curl -d`), nested at most {@link MAX_JSON_DEPTH}
 * levels (else 400 `json_too_deep`, checked on the text before parsing), and free of
 * `__proto__`/`constructor`/`prototype` keys (else 400 `invalid_request`). The parsed value is
 * left in hono's body cache, so the route's validator does not parse it again. Bodies that do
 * not parse are left to the validator, which answers 400 `malformed_json`.
 *
 * @example
 * app.use("/v1/*", jsonBody());
 */
export function jsonBody(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const method = c.req.method;
    if (method === "GET" || method === "HEAD") return next();
    // Judged by the headers first: on Node, touching `req.raw.body` builds a full web Request
    // around the socket and takes the adapter off its fast path for reading the body
    // (measured: a third more server CPU per step). Only a request that declares neither a
    // length nor chunking (a Request built in-process, a bare `curl -X POST`) is asked.
    const length = c.req.header("content-length");
    const declared = length !== undefined || c.req.header("transfer-encoding") !== undefined;
    if (length === "0" || (!declared && c.req.raw.body === null)) return next();
    const text = await c.req.text();
    const type = c.req.header("content-type");
    if (text.length === 0 && type === undefined) return next();
    if (type === undefined || !JSON_TYPE.test(type)) {
      return errorResponse(
        c,
        new ApiError("unsupported_media_type", `request bodies must be JSON: send Content-Type: application/json (got ${type === undefined ? "none" : JSON.stringify(type.slice(0, 100))})`),
      );
    }
    const depth = jsonDepth(text);
    if (depth > MAX_JSON_DEPTH) {
      return errorResponse(c, new ApiError("json_too_deep", `request body nests ${depth} levels; at most ${MAX_JSON_DEPTH} are accepted`, { max_depth: MAX_JSON_DEPTH }));
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return next();
    }
    const bad = findForbiddenKey(parsed);
    if (bad) {
      return errorResponse(
        c,
        new ApiError("invalid_request", `key ${JSON.stringify(bad[bad.length - 1])} is not accepted anywhere in a body (at ${bad.join(".")})`, {
          issues: [{ path: bad, message: "forbidden key", code: "forbidden_key" }],
        }),
      );
    }
    c.req.bodyCache.json = Promise.resolve(parsed);
    return next();
  };
}
