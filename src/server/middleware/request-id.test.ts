import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { AppEnv } from "../context.js";
import { requestId } from "./request-id.js";

function app() {
  const app = new Hono<AppEnv>();
  app.use("*", requestId());
  app.get("/json", (c) => c.json({ id: c.get("requestId") }));
  app.get("/body", (c) => c.body("{}", 201, { "Content-Type": "application/json" }));
  app.get("/raw", () => new Response("made without the context"));
  app.get("/fail", () => {
    throw new Error("boom");
  });
  app.onError((_err, c) => c.json({ request_id: c.get("requestId") }, 500));
  return app;
}

describe("requestId", () => {
  it("makes an id and puts it on the response and in the context", async () => {
    const res = await app().request("/json");
    const id = res.headers.get("x-request-id");
    expect(id).toMatch(/^req_[0-9a-f]{20}$/);
    expect(await res.json()).toEqual({ id });
  });

  it("keeps a sane client id and replaces an unsafe one", async () => {
    expect((await app().request("/json", { headers: { "x-request-id": "trace-42" } })).headers.get("x-request-id")).toBe("trace-42");
    expect((await app().request("/json", { headers: { "x-request-id": "bad id;" } })).headers.get("x-request-id")).toMatch(/^req_/);
  });

  it("sets the header on c.body responses, responses built without the context, and error responses", async () => {
    const a = app();
    const body = await a.request("/body", { headers: { "x-request-id": "trace-1" } });
    expect([body.status, body.headers.get("x-request-id"), body.headers.get("content-type")]).toEqual([201, "trace-1", "application/json"]);
    expect((await a.request("/raw", { headers: { "x-request-id": "trace-2" } })).headers.get("x-request-id")).toBe("trace-2");
    const failed = await a.request("/fail", { headers: { "x-request-id": "trace-3" } });
    expect([failed.status, failed.headers.get("x-request-id"), await failed.json()]).toEqual([500, "trace-3", { request_id: "trace-3" }]);
  });
});
