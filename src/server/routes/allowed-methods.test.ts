import { describe, expect, it } from "vitest";
import { allowedMethodsLookup } from "./allowed-methods.js";

describe("allowedMethodsLookup", () => {
  const lookup = allowedMethodsLookup([
    { method: "ALL", path: "/v1/*" },
    { method: "GET", path: "/v1/episodes/:episode_id" },
    { method: "DELETE", path: "/v1/episodes/:episode_id" },
    { method: "POST", path: "/v1/episodes/:episode_id/step" },
    { method: "GET", path: "/openapi.json" },
  ]);

  it("lists every method a path is served under, HEAD with GET, and skips middleware", () => {
    expect(lookup("/v1/episodes/ep_1")).toEqual(["DELETE", "GET", "HEAD"]);
    expect(lookup("/v1/episodes/ep_1/step")).toEqual(["POST"]);
    expect(lookup("/openapi.json")).toEqual(["GET", "HEAD"]);
  });

  it("matches a parameter to one segment only and escapes literal dots", () => {
    expect(lookup("/v1/episodes/a/b")).toEqual([]);
    expect(lookup("/openapiXjson")).toEqual([]);
    expect(lookup("/v1/nothing")).toEqual([]);
  });
});
