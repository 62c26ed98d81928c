import { serve, type ServerType } from "@hono/node-server";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { inProcessApp } from "../../../test/support/in-process.js";
import { reverseText } from "../builtin/reverse-text/index.js";
import { rowsDataset } from "../dataset.js";
import { envGroup } from "../env-group.js";
import { defineRubric } from "../rubric.js";
import { mcpToolEnv } from "./mcp-tool-env.js";
import { mcpHttpServer } from "./servers.js";
import { mcpStdioServer } from "./stdio.node.js";

// A real MCP server over streamable HTTP on loopback, built with the official SDK; one
// McpServer per request (stateless), as the SDK documents for that mode.
function toolServer(): McpServer {
  const s = new McpServer({ name: "fixture", version: "1.0.0" });
  s.registerTool("echo", { description: "Echoes text.", inputSchema: { text: z.string() } }, ({ text }) => ({ content: [{ type: "text", text }] }));
  s.registerTool("flood", { description: "Returns 100,000 characters." }, () => ({ content: [{ type: "text", text: "x".repeat(100_000) }] }));
  s.registerTool("refuse", { description: "Always fails." }, () => ({ content: [{ type: "text", text: "no such record" }], isError: true }));
  s.registerTool("hang", { description: "Answers after 30 s." }, async () => {
    await new Promise((resolve) => setTimeout(resolve, 30_000).unref());
    return { content: [{ type: "text", text: "late" }] };
  });
  s.registerTool("bad.name", { description: "A name OpenAI function calling refuses." }, () => ({ content: [] }));
  return s;
}

let http: ServerType;
let url: string;
beforeAll(async () => {
  await new Promise<void>((resolve) => {
    http = serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: async (req) => {
        const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
        await toolServer().connect(transport);
        return transport.handleRequest(req);
      },
    }, (info) => {
      url = `http://127.0.0.1:${info.port}/mcp`;
      resolve();
    });
  });
});
afterAll(() => new Promise<void>((resolve) => http.close(() => resolve())));

const dataset = rowsDataset({ train: [{ prompt: "Use the tools.", answer: "hi" }], eval: [{ prompt: "Use the tools.", answer: "hi" }] });
const rubric = defineRubric<unknown>([{ name: "said_hi", weight: 1, fn: ({ completion }) => Number(completion.some((m) => m.role === "tool" && m.content === "hi")) }]);

function httpEnv(allow: string[] = ["echo", "flood", "refuse", "hang"]) {
  return mcpToolEnv({
    id: "mcp-fixture",
    version: "1.0.0",
    description: "fixture",
    dataset,
    rubric,
    mcpServers: [mcpHttpServer({ name: "fixture", url })],
    allowTools: { fixture: allow },
    toolTimeoutMs: 300,
    maxToolOutputChars: 1_000,
  });
}

const call = (id: string, name: string, args: unknown) => ({ id, type: "function", function: { name, arguments: typeof args === "string" ? args : JSON.stringify(args) } });

describe("mcpToolEnv over streamable HTTP", () => {
  it("offers the server's tools, runs calls through MCP, and scores the episode", async () => {
    const env = httpEnv();
    const app = inProcessApp({ envs: [env] });
    try {
      const reset = await app.call("POST", "/v1/envs/mcp-fixture/episodes", { index: 0 });
      expect(reset.status).toBe(201);
      expect(reset.json.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(["echo", "flood", "refuse", "hang"]);
      expect(reset.json.tools[0].function.parameters).toMatchObject({ type: "object", properties: { text: { type: "string" } }, required: ["text"] });
      const id = reset.json.episode_id as string;
      const step = await app.call("POST", `/v1/episodes/${id}/step`, { turn: 0, message: { role: "assistant", content: null, tool_calls: [call("c1", "echo", { text: "hi" })] } });
      expect(step.json.messages).toEqual([{ role: "tool", tool_call_id: "c1", content: "hi" }]);
      // GET serves the same tools from the episode's record, without asking the server.
      expect((await app.call("GET", `/v1/episodes/${id}`)).json.tools).toEqual(reset.json.tools);
      const end = await app.call("POST", `/v1/episodes/${id}/step`, { turn: 1, message: { role: "assistant", content: "done" } });
      expect(end.json).toMatchObject({ done: true, stop_reason: "no_tool_calls" });
      expect((await app.call("POST", `/v1/episodes/${id}/score`)).json.score.reward).toBe(1);
    } finally {
      await env.close();
      app.close();
    }
  });

  it("hostile output and failures become Error messages to the model, as with built-in tools", async () => {
    const env = httpEnv();
    const app = inProcessApp({ envs: [env] });
    try {
      const id = (await app.call("POST", "/v1/envs/mcp-fixture/episodes", { index: 0 })).json.episode_id as string;
      const step = await app.call("POST", `/v1/episodes/${id}/step`, {
        turn: 0,
        message: {
          role: "assistant",
          content: null,
          tool_calls: [call("a", "flood", {}), call("b", "refuse", {}), call("c", "hang", {}), call("d", "bad.name", {}), call("e", "echo", "{not json"), call("f", "echo", { text: 5 }), call("g", "echo", [1])],
        },
      });
      const content = (step.json.messages as { content: string }[]).map((m) => m.content);
      expect(content[0]?.length).toBeLessThan(1_100);
      expect(content[0]).toMatch(/\[output cut: 99000 more characters\]$/);
      expect(content[1]).toBe("Error: no such record");
      expect(content[2]).toMatch(/^Error: tool "hang" timed out after 300 ms/);
      expect(content[3]).toMatch(/^Error: unknown tool "bad.name"/);
      expect(content[4]).toBe("Error: arguments are not valid JSON");
      expect(content[5]).toMatch(/^Error: .*text/);
      expect(content[6]).toMatch(/^Error: invalid arguments/);
    } finally {
      await env.close();
      app.close();
    }
  });

  it("refuses, at reset, a server tool whose name a chat template would not accept", async () => {
    const env = httpEnv(["echo", "bad.name"]);
    const app = inProcessApp({ envs: [env] });
    try {
      const reset = await app.call("POST", "/v1/envs/mcp-fixture/episodes", { index: 0 });
      expect([reset.status, reset.json.error.code]).toEqual([422, "env_unavailable"]);
      expect(reset.json.error.message).toMatch(/bad\.name/);
    } finally {
      await env.close();
      app.close();
    }
  });

  it("a server that redirects is refused: the call (and its headers) goes nowhere else", async () => {
    const seen: string[] = [];
    const redirecting: typeof fetch = async (input) => {
      seen.push(String(input));
      return new Response(null, { status: 307, headers: { location: "http://attacker.test/mcp" } });
    };
    const env = mcpToolEnv({ id: "mcp-redirect", version: "1.0.0", description: "x", dataset, rubric, mcpServers: [mcpHttpServer({ name: "r", url: "http://mcp.test/mcp", headers: { authorization: "Bearer tool-key" }, fetch: redirecting })] });
    const app = inProcessApp({ envs: [env] });
    try {
      const reset = await app.call("POST", "/v1/envs/mcp-redirect/episodes", { index: 0 });
      expect([reset.status, reset.json.error.code]).toEqual([422, "env_unavailable"]);
      expect(reset.json.error.message).toMatch(/redirect/);
      expect(seen.every((u) => u.startsWith("http://mcp.test/"))).toBe(true);
    } finally {
      await env.close();
      app.close();
    }
  });

  it("a server that cannot be reached fails the reset with a clear error, not a hang", async () => {
    const env = mcpToolEnv({ id: "mcp-down", version: "1.0.0", description: "x", dataset, rubric, mcpServers: [mcpHttpServer({ name: "down", url: "http://127.0.0.1:9/mcp" })], listTimeoutMs: 2_000 });
    const app = inProcessApp({ envs: [env] });
    try {
      const reset = await app.call("POST", "/v1/envs/mcp-down/episodes", { index: 0 });
      expect([reset.status, reset.json.error.code]).toEqual([422, "env_unavailable"]);
      expect(reset.json.error.message).toMatch(/mcp-down: its MCP tools could not be listed/);
    } finally {
      await env.close();
      app.close();
    }
  });
});

describe("mcpToolEnv in an environment group", () => {
  it("a group member offers its episode's MCP tools and runs them", async () => {
    const env = httpEnv(["echo"]);
    const group = envGroup({ id: "mcp-group", envs: [env, reverseText] });
    const app = inProcessApp({ envs: [group] });
    try {
      const reset = await app.call("POST", "/v1/envs/mcp-group/episodes", { index: 0 });
      expect(reset.json.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(["echo"]);
      const step = await app.call("POST", `/v1/episodes/${reset.json.episode_id}/step`, { turn: 0, message: { role: "assistant", tool_calls: [call("c1", "echo", { text: "hi" })] } });
      expect(step.json.messages).toEqual([{ role: "tool", tool_call_id: "c1", content: "hi" }]);
    } finally {
      await env.close();
      app.close();
    }
  });
});

describe("mcpToolEnv over stdio", () => {
  it("passes none of edgegym's environment (keys) to the server process, and restarts it when it dies", async () => {
    process.env.EDGEGYM_API_KEYS = "sk-must-not-leak";
    const fixture = fileURLToPath(new URL("../../../test/fixtures/mcp-env-server.mjs", import.meta.url));
    const root = fileURLToPath(new URL("../../../", import.meta.url));
    const env = mcpToolEnv({ id: "mcp-env", version: "1.0.0", description: "x", dataset, rubric, maxTurns: 10, mcpServers: [mcpStdioServer({ name: "env", command: process.execPath, args: [fixture], cwd: root })] });
    const app = inProcessApp({ envs: [env] });
    try {
      const id = (await app.call("POST", "/v1/envs/mcp-env/episodes", { index: 0 })).json.episode_id as string;
      const step = await app.call("POST", `/v1/episodes/${id}/step`, { turn: 0, message: { role: "assistant", tool_calls: [call("e", "env_names", {})] } });
      const names = (step.json.messages[0].content as string).split(",");
      expect(names).toContain("PATH");
      expect(names).not.toContain("EDGEGYM_API_KEYS");
      expect(names.every((n) => ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"].includes(n))).toBe(true);

      // The server process dies: the next call tells the model, the one after runs on a new process.
      const first = await app.call("POST", `/v1/episodes/${id}/step`, { turn: 1, message: { role: "assistant", tool_calls: [call("p1", "pid", {})] } });
      const pid = Number(first.json.messages[0].content);
      process.kill(pid, "SIGKILL");
      await new Promise((resolve) => setTimeout(resolve, 200));
      let turn = 2;
      let content = "";
      for (; turn < 5 && !/^\d+$/.test(content); turn++) {
        const next = await app.call("POST", `/v1/episodes/${id}/step`, { turn, message: { role: "assistant", tool_calls: [call(`p${turn}`, "pid", {})] } });
        content = next.json.messages[0].content as string;
        if (!/^\d+$/.test(content)) expect(content).toMatch(/^Error: /);
      }
      expect(Number(content)).not.toBe(pid);
    } finally {
      delete process.env.EDGEGYM_API_KEYS;
      await env.close();
      app.close();
    }
  });
});
