import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { http, startNodeServer, type ChildServer } from "./support/node-server.js";

// The real Node entry (built dist) over real HTTP, driven by the official MCP client: an
// agent plays mcp-units through /mcp/episodes/{id}, whose tool is itself served by the MCP
// server edgegym runs as a child process. Both directions of MCP in one episode. Then two
// agents on the two seats' URLs of one self-play game, one waiting for its turn.
describe("MCP on the Node server", () => {
  let dir: string;
  let server: ChildServer;
  const auth = { authorization: "Bearer sk-mcp" };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "edgegym-mcp-"));
    server = await startNodeServer({ db: join(dir, "edgegym.db"), env: { EDGEGYM_API_KEYS: "sk-mcp" } });
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("an MCP agent plays mcp-units over HTTP with a Bearer key; the trainer scores it over /v1", async () => {
    const reset = await http(`${server.url}/v1/envs/mcp-units/episodes`, "POST", { split: "eval", seed: 5 }, auth);
    expect(reset.status).toBe(201);
    const id = reset.json.episode_id as string;
    const endpoint = new URL(`${server.url}/mcp/episodes/${id}`);

    const anonymous = new Client({ name: "no-key", version: "1.0.0" });
    await expect(anonymous.connect(new StreamableHTTPClientTransport(endpoint))).rejects.toThrow(/401|unauthorized/i);

    const client = new Client({ name: "agent", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: auth } }));
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["convert_units", "edgegym_reply"]);
      const info = (await http(`${server.url}/v1/episodes/${id}`, "GET", undefined, auth)).json;
      const prompt = info.messages.at(-1).content as string;
      const [, value, from, to] = /([\d.]+) (\S+) (?:to|in|is how many) (\S+?)[.?]$/.exec(prompt.replace("A reading of ", "")) as unknown as [string, string, string, string];
      const converted = await client.callTool({ name: "convert_units", arguments: { value: Number(value), from, to } });
      const text = (converted.content as { type: string; text: string }[])[0]?.text as string;
      expect(Number.isFinite(Number(text))).toBe(true);
      const done = await client.callTool({ name: "edgegym_reply", arguments: { content: `<answer>${text}</answer>` } });
      expect(done._meta).toMatchObject({ "edgegym/step": { turn: 2, done: true } });
    } finally {
      await client.close();
    }
    const score = await http(`${server.url}/v1/episodes/${id}/score`, "POST", undefined, auth);
    expect(score.json.score.reward).toBeCloseTo(1.1, 10);
  });

  it("an episode played over MCP survives a restart of the server: a new client carries on at the next turn", async () => {
    const reset = await http(`${server.url}/v1/envs/tool-math/episodes`, "POST", { split: "eval", index: 3 }, auth);
    const id = reset.json.episode_id as string;
    const connect = async () => {
      const client = new Client({ name: "agent", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp/episodes/${id}`), { requestInit: { headers: auth } }));
      return client;
    };
    const before = await connect();
    expect((await before.callTool({ name: "calculator", arguments: { expression: "2^10" } }))._meta).toMatchObject({ "edgegym/turn": 1 });
    await before.close();
    await server.stop();
    server = await startNodeServer({ db: join(dir, "edgegym.db"), env: { EDGEGYM_API_KEYS: "sk-mcp" } });
    const after = await connect();
    try {
      const next = await after.callTool({ name: "calculator", arguments: { expression: "2^11" } });
      expect(next.content).toEqual([{ type: "text", text: "2048" }]);
      expect(next._meta).toMatchObject({ "edgegym/turn": 2 });
    } finally {
      await after.close();
    }
    const episode = await http(`${server.url}/v1/episodes/${id}`, "GET", undefined, auth);
    expect(episode.json.messages.filter((m: { role: string }) => m.role === "tool").map((m: { content: string }) => m.content)).toEqual(["1024", "2048"]);
  });

  it("two MCP agents play the seats of one self-play game, one waiting (edgegym_wait) while the other moves", async () => {
    const reset = await http(`${server.url}/v1/envs/tic-tac-toe-2p/episodes`, "POST", { seed: 12 }, auth);
    const id = reset.json.episode_id as string;
    const seat = async (name: string) => {
      const client = new Client({ name: `agent-${name}`, version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp/episodes/${id}?seat=${name}`), { requestInit: { headers: auth } }));
      return client;
    };
    const [x, o] = [await seat("x"), await seat("o")];
    const text = (result: unknown) => ((result as { content: { text: string }[] }).content ?? []).map((c) => c.text).join("\n");
    try {
      await x.callTool({ name: "edgegym_reply", arguments: { content: "<move>5</move>" } });
      // x's wait is answered only once o has moved.
      const waiting = x.callTool({ name: "edgegym_wait", arguments: { max_seconds: 20 } });
      const oTurn = await o.callTool({ name: "edgegym_wait", arguments: {} });
      expect(text(oTurn)).toMatch(/X played 5/);
      await new Promise((r) => setTimeout(r, 300));
      await o.callTool({ name: "edgegym_reply", arguments: { content: "<move>1</move>" } });
      const xTurn = await waiting;
      expect(text(xTurn)).toMatch(/O played 1/);
      expect(xTurn._meta).toMatchObject({ "edgegym/step": { seat: "x", to_play: "x", turn: 2 } });
    } finally {
      await x.close();
      await o.close();
    }
    const view = await http(`${server.url}/v1/episodes/${id}?seat=o`, "GET", undefined, auth);
    expect(view.json.messages.filter((m: { role: string }) => m.role === "assistant").map((m: { content: string }) => m.content)).toEqual(["<move>1</move>"]);
  });
});
