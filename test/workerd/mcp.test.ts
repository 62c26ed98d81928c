import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, expect, it } from "vitest";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { z } from "zod";
import { defineRubric, mcpHttpServer, mcpToolEnv, rowsDataset } from "../../src/envs/index.js";
import { createWorker } from "../../src/server/worker/worker.js";
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

  it("plays the seats of a self-play game on their own URLs, edgegym_wait answering once the other seat has moved", async () => {
    const reset = await workerFetch("http://edgegym.test/v1/envs/tic-tac-toe-2p/episodes", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ seed: 3 }) });
    const { episode_id: id } = (await reset.json()) as { episode_id: string };
    const seat = async (name: string) => {
      const client = new Client({ name: `agent-${name}`, version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(`http://edgegym.test/mcp/episodes/${id}?seat=${name}`), { fetch: workerFetch }));
      return client;
    };
    const [x, o] = [await seat("x"), await seat("o")];
    const text = (result: unknown) => ((result as { content: { text: string }[] }).content ?? []).map((c) => c.text).join("\n");
    await x.callTool({ name: "edgegym_reply", arguments: { content: "<move>5</move>" } });
    const waiting = x.callTool({ name: "edgegym_wait", arguments: { max_seconds: 10 } });
    expect(text(await o.callTool({ name: "edgegym_wait", arguments: {} }))).toMatch(/X played 5/);
    await o.callTool({ name: "edgegym_reply", arguments: { content: "<move>1</move>" } });
    expect(text(await waiting)).toMatch(/O played 1/);
    await x.close();
    await o.close();
  });

  it("mcp-units (its MCP server is a child process) is declared on the Worker and answers env_unavailable", async () => {
    const reset = await workerFetch("http://edgegym.test/v1/envs/mcp-units/episodes", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(reset.status).toBe(422);
    expect(((await reset.json()) as { error: { code: string } }).error.code).toBe("env_unavailable");
  });
});

describe("mcpToolEnv on the Worker", () => {
  // An MCP server built with the SDK, answering inside workerd: the env's client reaches it
  // through mcpHttpServer's fetch, the way a Worker would reach a server over the network.
  const mcpFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const server = new McpServer({ name: "upper", version: "1.0.0" });
    server.registerTool("upper", { description: "Upper-cases text.", inputSchema: { text: z.string() } }, ({ text }) => ({ content: [{ type: "text", text: text.toUpperCase() }] }));
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    return transport.handleRequest(new Request(input, init));
  };
  const upper = mcpToolEnv({
    id: "mcp-upper",
    version: "1.0.0",
    description: "Upper-cases with an MCP tool.",
    dataset: rowsDataset({ train: [{ prompt: "shout hi", answer: "HI" }] }),
    mcpServers: [mcpHttpServer({ name: "upper", url: "http://mcp.test/mcp", fetch: mcpFetch })],
    rubric: defineRubric([{ name: "exact", weight: 1, fn: ({ completion, answer, parser }) => Number(parser.parseAnswer(completion) === answer) }]),
  });
  const app = createWorker([upper]);
  const call = async (path: string, body: unknown) => {
    const ctx = createExecutionContext();
    const res = await app.fetch(new Request(`http://edgegym.test${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }), env, ctx);
    await waitOnExecutionContext(ctx);
    return (await res.json()) as { episode_id: string; tools: { function: { name: string } }[]; messages: { content: string }[]; score: { reward: number } };
  };

  it("lists the server's tools at reset and runs a call through MCP", async () => {
    const reset = await call("/v1/envs/mcp-upper/episodes", { index: 0 });
    expect(reset.tools.map((t) => t.function.name)).toEqual(["upper"]);
    const step = await call(`/v1/episodes/${reset.episode_id}/step`, { turn: 0, message: { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "upper", arguments: '{"text":"hi"}' } }] } });
    expect(step.messages).toEqual([{ role: "tool", tool_call_id: "c1", content: "HI" }]);
    await call(`/v1/episodes/${reset.episode_id}/step`, { turn: 1, message: { role: "assistant", content: "<answer>HI</answer>" } });
    expect((await call(`/v1/episodes/${reset.episode_id}/score`, {})).score.reward).toBe(1);
    await upper.close();
  });
});
