import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, expect, it } from "vitest";
import worker from "../../src/server/worker/index.js";

// The MCP route inside workerd over D1: the SDK's web-standard server transport runs on
// the Workers runtime, driven by the official client whose fetch is the Worker's handler.
async function workerFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(input, init), env, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

describe("an episode as an MCP server on the Worker", () => {
  it("plays tool-math with the official MCP client: calls become steps in D1", async () => {
    const reset = await workerFetch("http://edgegym.test/v1/envs/tool-math/episodes", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ split: "eval", index: 0 }) });
    const { episode_id: id } = (await reset.json()) as { episode_id: string };
    const client = new Client({ name: "edgegym-workerd-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://edgegym.test/mcp/episodes/${id}`), { fetch: workerFetch }));
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["calculator", "edgegym_reply"]);
    const calc = await client.callTool({ name: "calculator", arguments: { expression: "12 * 12" } });
    expect(calc.content).toEqual([{ type: "text", text: "144" }]);
    const done = await client.callTool({ name: "edgegym_reply", arguments: { content: "<answer>1</answer>" } });
    expect(done._meta).toMatchObject({ "edgegym/step": { turn: 2, done: true } });
    await client.close();
    const row = await env.DB.prepare("SELECT turn, status FROM episodes WHERE id = ?").bind(id).first<{ turn: number; status: string }>();
    expect(row).toEqual({ turn: 2, status: "done" });
  });

  it("mcp-units (its MCP server is a child process) is declared on the Worker and answers env_unavailable", async () => {
    const reset = await workerFetch("http://edgegym.test/v1/envs/mcp-units/episodes", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(reset.status).toBe(422);
    expect(((await reset.json()) as { error: { code: string } }).error.code).toBe("env_unavailable");
  });
});
