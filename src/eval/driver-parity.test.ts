import { describe, expect, it } from "vitest";
import { envGroup, EnvRegistry } from "../envs/index.js";
import { echo, sums } from "../../test/support/echo-and-sums.js";
import { inProcessApp } from "../../test/support/in-process.js";
import { HttpDriver } from "./http-driver.js";
import { InProcessDriver } from "./in-process-driver.js";

// Two members that differ in every per-episode field (test/support/echo-and-sums.ts).
const group = envGroup({ id: "mixed", envs: [echo, sums] });

describe("the in-process driver and the HTTP server offer the same episode", () => {
  it("for every task of an environment group: messages, tools and turn limit per member", async () => {
    const server = inProcessApp({ envs: [group] });
    const http = new HttpDriver({ baseUrl: "http://edgegym.test", retry: { maxRetries: 0 }, fetch: (input, init) => Promise.resolve(server.app.request(String(input), init)) });
    const local = new InProcessDriver(new EnvRegistry("node", [group]));
    try {
      const seen = new Set<string>();
      for (let index = 0; index < 4; index++) {
        const request = { split: "train" as const, index };
        const [a, b] = [await http.reset("mixed", request, `k${index}`), await local.reset("mixed", request, `k${index}`)];
        expect({ messages: b.messages, tools: b.tools, max_turns: b.max_turns, index: b.index }).toEqual({ messages: a.messages, tools: a.tools, max_turns: a.max_turns, index: a.index });
        seen.add(`${b.tools.length}/${b.max_turns}`);
      }
      // Both members were reached, each with its own view.
      expect([...seen].sort()).toEqual(["0/1", "1/3"]);
      expect(await local.examples("mixed", "train", 0, 10)).toEqual(await http.examples("mixed", "train", 0, 10));
      expect(await local.describe("mixed")).toEqual(await http.describe("mixed"));
    } finally {
      server.close();
    }
  });

  it("both say not found and unavailable alike, from registry.resolve", async () => {
    const registry = new EnvRegistry("worker", [group, { ...echo, id: "node-only", runtimes: ["node"] }]);
    expect(registry.resolve("mixed").status).toBe("found");
    expect(registry.resolve("nope")).toEqual({ status: "not_found", reason: 'no environment "nope"' });
    expect(registry.resolve("node-only").status).toBe("unavailable");
    const local = new InProcessDriver(registry);
    await expect(local.reset("nope", {}, "a")).rejects.toMatchObject({ serverCode: "env_not_found" });
    await expect(local.reset("node-only", {}, "b")).rejects.toMatchObject({ serverCode: "env_unavailable" });
    const server = inProcessApp({ envs: [group, { ...echo, id: "node-only", runtimes: ["node"] }], runtime: "worker" });
    try {
      expect((await server.call("POST", "/v1/envs/nope/episodes", {})).status).toBe(404);
      const unavailable = await server.call("POST", "/v1/envs/node-only/episodes", {});
      expect(unavailable.status).toBe(422);
      expect(unavailable.json.error.code).toBe("env_unavailable");
    } finally {
      server.close();
    }
  });
});
