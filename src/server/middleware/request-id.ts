import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../context.js";

const CLIENT_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Gives every request an id, echoed in `X-Request-Id` and in error bodies. A client's
 * own id is kept when it is a sane token, so logs on both sides line up.
 *
 * The header is set before the handler runs, so it goes into the response the handler
 * builds (c.json, c.body, error bodies). Setting it afterwards makes hono rebuild a
 * finished response around its body stream, which on Node turns the adapter's cheap
 * response into two full web Responses: measured at about a third of GET /health's
 * server time (docs/performance.md). Only a response built without the context
 * (a handler returning `new Response(...)`) still takes that path.
 *
 * @example app.use(requestId())
 */
export function requestId(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const given = c.req.header("x-request-id");
    const id = given && CLIENT_ID.test(given) ? given : `req_${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`;
    c.set("requestId", id);
    c.header("X-Request-Id", id);
    await next();
    if (c.res.headers.get("X-Request-Id") !== id) c.header("X-Request-Id", id);
  };
}
