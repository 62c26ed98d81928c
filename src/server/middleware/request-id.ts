import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../context.js";

const CLIENT_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Gives every request an id, echoed in `X-Request-Id` and in error bodies. A client's
 * own id is kept when it is a sane token, so logs on both sides line up.
 *
 * @example app.use(requestId())
 */
export function requestId(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const given = c.req.header("x-request-id");
    const id = given && CLIENT_ID.test(given) ? given : `req_${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`;
    c.set("requestId", id);
    await next();
    c.header("X-Request-Id", id);
  };
}
