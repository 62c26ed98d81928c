import { describe, expect, it } from "vitest";
import { inProcessApp } from "../../../test/support/in-process.js";
import { findForbiddenKey, jsonDepth, MAX_JSON_DEPTH } from "./json-body.js";

describe("jsonDepth", () => {
  it("counts nesting of arrays and objects, not brackets inside strings", () => {
    expect(jsonDepth("1")).toBe(0);
    expect(jsonDepth('{"a":[1,{"b":[]}]}')).toBe(4);
    expect(jsonDepth('{"a":"[[[{{{\\"[[["}')).toBe(1);
    expect(jsonDepth("[".repeat(100_000))).toBe(100_000);
  });
});

describe("findForbiddenKey", () => {
  it("finds __proto__, constructor and prototype at any depth and says where", () => {
    expect(findForbiddenKey(JSON.parse('{"a":[{"b":{"__proto__":1}}]}'))).toEqual(["a", 0, "b", "__proto__"]);
    expect(findForbiddenKey({ x: { constructor: 1 } })).toEqual(["x", "constructor"]);
    expect(findForbiddenKey([{ prototype: null }])).toEqual([0, "prototype"]);
    expect(findForbiddenKey({ a: "__proto__", b: ["constructor"] })).toBeUndefined();
  });
});

describe("jsonBody on the app", () => {
  it("takes exactly 64 levels and refuses 65", async () => {
    const { app, close } = inProcessApp();
    const nested = (levels: number) => `{"metadata":{"m":${"[".repeat(levels - 2)}${"]".repeat(levels - 2)}}}`;
    const post = (body: string) => app.request("/v1/envs/reverse-text/episodes", { method: "POST", headers: { "content-type": "application/json" }, body });
    expect((await post(nested(MAX_JSON_DEPTH))).status).toBe(201);
    const deep = await post(nested(MAX_JSON_DEPTH + 1));
    expect([deep.status, ((await deep.json()) as { error: { code: string } }).error.code]).toEqual([400, "json_too_deep"]);
    close();
  });

  it("answers a reset with no body at all, and checks GET requests not at all", async () => {
    const { app, close } = inProcessApp();
    expect((await app.request("/v1/envs/reverse-text/episodes", { method: "POST" })).status).toBe(201);
    expect((await app.request("/v1/envs", { headers: { "content-type": "text/plain" } })).status).toBe(200);
    close();
  });
});
