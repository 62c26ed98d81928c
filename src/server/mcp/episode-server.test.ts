import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { inProcessApp } from "../../../test/support/in-process.js";
import { EDGEGYM_JSONRPC_CODE, REPLY_TOOL, TURN_META } from "./episode-server.js";

// The official MCP client (TypeScript SDK) against the app in-process: its fetch is the app's.
const apps: ReturnType<typeof inProcessApp>[] = [];
const clients: Client[] = [];
afterEach(async () => {
  while (clients.length) await clients.pop()?.close();
  while (apps.length) apps.pop()?.close();
});

function setup(config: Parameters<typeof inProcessApp>[0] = {}) {
  const app = inProcessApp(config);
  apps.push(app);
  return app;
}

async function connect(app: ReturnType<typeof inProcessApp>, episodeId: string, headers: Record<string, string> = {}): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`http://edgegym.test/mcp/episodes/${episodeId}`), {
    fetch: (url, init) => Promise.resolve(app.app.request(String(url), init)),
    requestInit: { headers },
  });
  const client = new Client({ name: "edgegym-test", version: "1.0.0" });
  await client.connect(transport);
  clients.push(client);
  return client;
}

function texts(result: unknown): string[] {
  return CallToolResultSchema.parse(result).content.map((c) => (c.type === "text" ? c.text : `<${c.type}>`));
}

async function mcpError(p: Promise<unknown>): Promise<McpError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(McpError);
  return err as McpError;
}

describe("an episode as an MCP server (official TS SDK client)", () => {
  it("plays tool-math: tool calls and the final reply are steps, recorded and scored", async () => {
    const app = setup();
    const reset = await app.call("POST", "/v1/envs/tool-math/episodes", { split: "eval", index: 0 });
    const id = reset.json.episode_id as string;
    const client = await connect(app, id);

    expect(client.getInstructions()).toContain(reset.json.messages.at(-1).content);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["calculator", REPLY_TOOL]);
    expect(tools[0]?.inputSchema).toMatchObject({ type: "object", properties: { expression: { type: "string" } } });
    const prompt = await client.getPrompt({ name: "task" });
    expect(prompt.messages.at(-1)?.content).toEqual({ type: "text", text: reset.json.messages.at(-1).content });

    const calc = await client.callTool({ name: "calculator", arguments: { expression: "6 * 7" } });
    expect(texts(calc)).toEqual(["42"]);
    expect(calc.isError).toBeUndefined();
    expect(calc._meta).toMatchObject({ [TURN_META]: 1, "edgegym/step": { turn: 1, done: false } });

    const bad = await client.callTool({ name: "calculator", arguments: { expression: "import('fs')" } });
    expect(bad.isError).toBe(true);
    expect(texts(bad)[0]).toMatch(/^Error:/);

    const answer = reset.json.messages.at(-1).content as string;
    expect(answer.length).toBeGreaterThan(0);
    const done = await client.callTool({ name: REPLY_TOOL, arguments: { content: "<answer>0</answer>" } });
    expect(done._meta).toMatchObject({ "edgegym/step": { turn: 3, done: true, stop_reason: "no_tool_calls" } });

    const episode = await app.call("GET", `/v1/episodes/${id}`);
    expect(episode.json.turn).toBe(3);
    const assistant = episode.json.messages.filter((m: { role: string }) => m.role === "assistant");
    expect(assistant[0].tool_calls[0].function).toEqual({ name: "calculator", arguments: JSON.stringify({ expression: "6 * 7" }) });
    expect(episode.json.messages.find((m: { role: string }) => m.role === "tool").content).toBe("42");
    const score = await app.call("POST", `/v1/episodes/${id}/score`);
    expect(score.status).toBe(200);
    expect(score.json.score.metrics).toBeDefined();
  });

  it("plays tic-tac-toe (multi-turn, no tools) through edgegym_reply", async () => {
    const app = setup();
    const reset = await app.call("POST", "/v1/envs/tic-tac-toe/episodes", { seed: 3 });
    const client = await connect(app, reset.json.episode_id);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual([REPLY_TOOL]);
    const move = await client.callTool({ name: REPLY_TOOL, arguments: { content: "<move>5</move>" } });
    expect(move._meta).toMatchObject({ [TURN_META]: 1 });
    expect(texts(move).join("\n")).toMatch(/\[user\]/);
  });

  it("a transport retry of the same request is not applied twice; the turn in _meta gives native retry semantics", async () => {
    const app = setup();
    const reset = await app.call("POST", "/v1/envs/tool-math/episodes", { split: "eval", index: 1 });
    const id = reset.json.episode_id as string;
    const url = `/mcp/episodes/${id}`;
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" };
    const body = JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "calculator", arguments: { expression: "1+1" } } });
    // The same JSON-RPC request sent twice, as a client re-sends a POST whose answer it lost.
    const first = await (await app.app.request(url, { method: "POST", headers, body })).json();
    const again = await (await app.app.request(url, { method: "POST", headers, body })).json();
    expect(again).toEqual(first);
    expect((await app.call("GET", `/v1/episodes/${id}`)).json.turn).toBe(1);

    // A new request (new id) with the same arguments is a new step.
    const next = JSON.stringify({ jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "calculator", arguments: { expression: "1+1" } } });
    await app.app.request(url, { method: "POST", headers, body: next });
    expect((await app.call("GET", `/v1/episodes/${id}`)).json.turn).toBe(2);

    // With the turn: the stale turn with a different message is edgegym's turn_conflict, as MCP's error shape.
    const client = await connect(app, id);
    const conflict = await mcpError(client.callTool({ name: "calculator", arguments: { expression: "2+2" }, _meta: { [TURN_META]: 0 } }));
    expect(conflict.code).toBe(EDGEGYM_JSONRPC_CODE);
    expect(conflict.data).toMatchObject({ code: "turn_conflict", status: 409 });
    const ok = await client.callTool({ name: "calculator", arguments: { expression: "2+2" }, _meta: { [TURN_META]: 2 } });
    expect(texts(ok)).toEqual(["4"]);
  });

  it("bad input is a JSON-RPC error: unknown tool, bad _meta turn, bad reply arguments, a done episode", async () => {
    const app = setup();
    const reset = await app.call("POST", "/v1/envs/reverse-text/episodes", { index: 0 });
    const id = reset.json.episode_id as string;
    const client = await connect(app, id);
    expect((await mcpError(client.callTool({ name: "rm_rf", arguments: {} }))).message).toMatch(/unknown tool "rm_rf"/);
    expect((await mcpError(client.callTool({ name: REPLY_TOOL, arguments: { content: "x" }, _meta: { [TURN_META]: -1 } }))).message).toMatch(/non-negative integer/);
    expect((await mcpError(client.callTool({ name: REPLY_TOOL, arguments: { text: "x" } }))).message).toMatch(/content/);
    await client.callTool({ name: REPLY_TOOL, arguments: { content: "<answer>x</answer>" } });
    const after = await mcpError(client.callTool({ name: REPLY_TOOL, arguments: { content: "<answer>y</answer>" } }));
    expect(after.data).toMatchObject({ code: "episode_done", status: 409 });
  });

  it("an unknown episode is 404 in JSON-RPC shape; GET and DELETE are 405", async () => {
    const app = setup();
    const res = await app.app.request("/mcp/episodes/ep_missing", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: EDGEGYM_JSONRPC_CODE, data: { code: "episode_not_found" } } });
    const get = await app.app.request("/mcp/episodes/ep_missing", { method: "GET" });
    expect([get.status, get.headers.get("allow")]).toEqual([405, "POST"]);
  });

  it("needs a Bearer key when the server has keys, and keeps tenants apart", async () => {
    const app = setup({ config: { apiKeys: ["alice:sk-a", "bob:sk-b"] } });
    const reset = await app.call("POST", "/v1/envs/reverse-text/episodes", { index: 0 }, { authorization: "Bearer sk-a" });
    const id = reset.json.episode_id as string;
    const anonymous = await app.app.request(`/mcp/episodes/${id}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(anonymous.status).toBe(401);
    await expect(connect(app, id, { authorization: "Bearer sk-b" })).rejects.toThrow(/404|episode_not_found|not found/i);
    const alice = await connect(app, id, { authorization: "Bearer sk-a" });
    expect((await alice.listTools()).tools.map((t) => t.name)).toEqual([REPLY_TOOL]);
  });

  it("hostile requests: odd and long request ids, a batch racing itself, deep JSON, __proto__, an oversized body", async () => {
    const app = setup({ config: { bodyLimitBytes: 4096 } });
    const reset = await app.call("POST", "/v1/envs/tool-math/episodes", { split: "eval", index: 2 });
    const id = reset.json.episode_id as string;
    const url = `/mcp/episodes/${id}`;
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" };
    const callMsg = (rid: string | number, expression: string) => ({ jsonrpc: "2.0", id: rid, method: "tools/call", params: { name: "calculator", arguments: { expression } } });

    // A request id the client chose freely becomes a bounded, safe tool call id.
    await app.app.request(url, { method: "POST", headers, body: JSON.stringify(callMsg(`x"<script>${"y".repeat(500)}`, "1+1")) });
    const stored = (await app.call("GET", `/v1/episodes/${id}`)).json.messages.find((m: { role: string; tool_calls?: unknown[] }) => m.role === "assistant");
    expect(stored.tool_calls[0].id).toMatch(/^mcp_sx__script_y+$/);
    expect(stored.tool_calls[0].id.length).toBe(4 + 64);

    // Two calls in one batch race for the same turn: one is applied, the other is a conflict, never both.
    const batch = await (await app.app.request(url, { method: "POST", headers, body: JSON.stringify([callMsg(21, "2+2"), callMsg(22, "3+3")]) })).json();
    expect(batch).toHaveLength(2);
    const outcomes = (batch as { result?: unknown; error?: { data: { code: string } } }[]).map((r) => (r.result ? "applied" : r.error?.data.code));
    expect(outcomes.sort()).toEqual(["applied", "turn_conflict"]);
    expect((await app.call("GET", `/v1/episodes/${id}`)).json.turn).toBe(2);

    const deep = await app.app.request(url, { method: "POST", headers, body: `{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{"name":"calculator","arguments":{"expression":"1","x":${"[".repeat(100)}${"]".repeat(100)}}}}` });
    expect([deep.status, ((await deep.json()) as { error: { data: { code: string } } }).error.data.code]).toEqual([400, "json_too_deep"]);
    const proto = await app.app.request(url, { method: "POST", headers, body: '{"jsonrpc":"2.0","id":32,"method":"tools/call","params":{"name":"calculator","arguments":{"expression":"1","__proto__":{"admin":true}}}}' });
    expect([proto.status, ((await proto.json()) as { error: { data: { code: string } } }).error.data.code]).toEqual([400, "invalid_request"]);
    const huge = await app.app.request(url, { method: "POST", headers, body: JSON.stringify(callMsg(30, "1".repeat(10_000))) });
    expect(huge.status).toBe(413);
    expect((await app.call("GET", `/v1/episodes/${id}`)).json.turn).toBe(2);
  });
});
