import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { AppEnv } from "../context.js";
import { limitBody } from "./body-limit.js";

function app() {
  const app = new Hono<AppEnv>();
  app.use("*", async (c, next) => {
    c.set("requestId", "req_test");
    await next();
  });
  app.use("*", limitBody(16));
  app.all("/echo", async (c) => c.text(c.req.method === "GET" ? "no body" : await c.req.text()));
  return app;
}

/** A body that fails the request if anyone reads it. */
function unreadableBody(): ReadableStream<Uint8Array> {
  return new ReadableStream({
    pull() {
      throw new Error("the body was read");
    },
  });
}

describe("limitBody", () => {
  it("refuses a declared Content-Length over the limit without reading the body", async () => {
    const res = await app().request("/echo", { method: "POST", headers: { "content-length": "17" }, body: unreadableBody(), duplex: "half" } as RequestInit);
    expect(res.status).toBe(413);
    expect(res.headers.get("connection")).toBe("close");
    expect(((await res.json()) as { error: { code: string; details: unknown } }).error).toMatchObject({ code: "payload_too_large", details: { limit_bytes: 16 } });
  });

  it("passes a body within a declared Content-Length", async () => {
    const res = await app().request("/echo", { method: "POST", headers: { "content-length": "5" }, body: "hello" });
    expect([res.status, await res.text()]).toEqual([200, "hello"]);
  });

  it("counts a body sent without Content-Length as it streams", async () => {
    const chunks = ["0123456789", "0123456789"];
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.shift();
        if (next === undefined) controller.close();
        else controller.enqueue(new TextEncoder().encode(next));
      },
    });
    const res = await app().request("/echo", { method: "POST", body: stream, duplex: "half" } as RequestInit);
    expect(res.status).toBe(413);
    const small = await app().request("/echo", { method: "POST", body: "0123456789" });
    expect([small.status, await small.text()]).toEqual([200, "0123456789"]);
  });

  it("leaves GET alone", async () => {
    const res = await app().request("/echo");
    expect([res.status, await res.text()]).toEqual([200, "no body"]);
  });
});
