import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { inProcessApp } from "../../../test/support/in-process.js";
import { EDGEGYM_JSONRPC_CODE, REPLY_TOOL, WAIT_TOOL } from "./episode-server.js";

// Seats over MCP with the official TS SDK client, in-process: an MCP server plays one seat
// (`?seat=` in its URL, or the only client seat), and everything it shows is that seat's.
const apps: ReturnType<typeof inProcessApp>[] = [];
const clients: Client[] = [];
afterEach(async () => {
  while (clients.length) await clients.pop()?.close();
  while (apps.length) apps.pop()?.close();
});

function setup() {
  const app = inProcessApp();
  apps.push(app);
  return app;
}

/** An agent on one seat's URL; `seen` keeps every text it was shown, to check nothing leaked into it. */
async function agent(app: ReturnType<typeof inProcessApp>, episodeId: string, seat?: string) {
  const url = `http://edgegym.test/mcp/episodes/${episodeId}${seat === undefined ? "" : `?seat=${seat}`}`;
  const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: (u, init) => Promise.resolve(app.app.request(String(u), init)) });
  const client = new Client({ name: `agent-${seat ?? "default"}`, version: "1.0.0" });
  await client.connect(transport);
  clients.push(client);
  const seen: string[] = [client.getInstructions() ?? ""];
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const result = CallToolResultSchema.parse(await client.callTool({ name, arguments: args }));
    const texts = result.content.map((c) => (c.type === "text" ? c.text : ""));
    seen.push(...texts);
    return { texts, meta: result._meta as Record<string, { to_play?: string | null; seat?: string; done?: boolean }> };
  };
  return { client, seen, call, reply: (content: string) => call(REPLY_TOOL, { content }) };
}

async function mcpError(p: Promise<unknown>): Promise<McpError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(McpError);
  return err as McpError;
}

/** A refused connect: the SDK raises the HTTP answer (422, 409) with the JSON-RPC error body in its message. */
async function refusedConnect(p: Promise<unknown>): Promise<{ code: string; status: number; details?: unknown }> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(Error);
  const body = /(\{"jsonrpc".*\})/.exec((err as Error).message)?.[1];
  expect(body, (err as Error).message).toBeDefined();
  const parsed = JSON.parse(body as string) as { error: { code: number; data: { code: string; status: number; details?: unknown } } };
  expect(parsed.error.code).toBe(EDGEGYM_JSONRPC_CODE);
  return parsed.error.data;
}

describe("seats over MCP", () => {
  it("plays the only client seat without ?seat=: kuhn-poker's p1 against nash, its view and no wait tool", async () => {
    const app = setup();
    const id = (await app.call("POST", "/v1/envs/kuhn-poker/episodes", { index: 2 })).json.episode_id as string;
    const p1 = await agent(app, id);
    expect(p1.client.getInstructions()).toMatch(/as seat "p1"/);
    expect(p1.client.getInstructions()).toMatch(/You are player 1/);
    expect(p1.client.getInstructions()).not.toMatch(/You are player 2|Your opponent acts first/);
    expect((await p1.client.listTools()).tools.map((t) => t.name)).toEqual([REPLY_TOOL]);
    const prompt = await p1.client.getPrompt({ name: "task" });
    expect(prompt.messages.map((m) => (m.content.type === "text" ? m.content.text : "")).join("\n")).toMatch(/Your card is the/);
    const bet = await p1.reply("<action>bet</action>");
    expect(bet.meta["edgegym/step"]).toMatchObject({ seat: "p1", to_play: null, done: true });
  });

  it("gives each agent its seat's URL in self-play: replies and waits are that seat's view, turns are checked", async () => {
    const app = setup();
    const id = (await app.call("POST", "/v1/envs/tic-tac-toe-2p/episodes", { seed: 5 })).json.episode_id as string;
    expect(await refusedConnect(agent(app, id))).toMatchObject({ code: "seat_required", status: 422, details: { client_seats: ["x", "o"] } });

    const x = await agent(app, id, "x");
    const o = await agent(app, id, "o");
    expect((await x.client.listTools()).tools.map((t) => t.name)).toEqual([REPLY_TOOL, WAIT_TOOL]);
    expect(o.client.getInstructions()).toMatch(/You play O/);
    expect(o.client.getInstructions()).not.toMatch(/You play X/);

    const first = await x.reply("<think>take the centre, then a corner</think><move>5</move>");
    expect(first.meta["edgegym/step"]).toMatchObject({ seat: "x", to_play: "o", done: false });
    expect(first.texts.at(-1)).toMatch(/it is "o"'s turn: call edgegym_wait/);
    // x moves again before o: refused with whose turn it is.
    const early = await mcpError(x.client.callTool({ name: REPLY_TOOL, arguments: { content: "<move>1</move>" } }));
    expect(early.data).toMatchObject({ code: "not_your_turn", status: 409, details: { to_play: "o" } });
    // x waits and o is still thinking: told so after the wait.
    const waited = await x.call(WAIT_TOOL, { max_seconds: 0.2 });
    expect(waited.texts.at(-1)).toMatch(/still "o"'s turn/);

    const turn = await o.call(WAIT_TOOL);
    expect(turn.texts.join("\n")).toMatch(/X played 5/);
    expect(turn.texts.at(-1)).toBe('[edgegym] your turn (seat "o")');
    await o.reply("<move>1</move>");
    const back = await x.call(WAIT_TOOL, { max_seconds: 5 });
    expect(back.texts.join("\n")).toMatch(/O played 1/);
    expect(back.meta["edgegym/step"]).toMatchObject({ seat: "x", to_play: "x" });
    expect(o.seen.join("\n")).not.toContain("take the centre");
    expect((await mcpError(x.client.callTool({ name: WAIT_TOOL, arguments: { max_seconds: 99 } }))).code).toBe(-32602);
  });

  it("keeps each kuhn-poker seat's card from the other when two agents play one hand", async () => {
    const app = setup();
    const id = (await app.call("POST", "/v1/envs/kuhn-poker/episodes", { index: 7, seats: { p2: "client" } })).json.episode_id as string;
    const p1 = await agent(app, id, "p1");
    const p2 = await agent(app, id, "p2");
    const bet = await p1.reply("<think>my card is strong</think><action>bet</action>");
    expect(bet.texts).toEqual(["[user] You bet 1 chip.", '[edgegym] it is "p2"\'s turn: call edgegym_wait to wait for yours']);
    const told = await p2.call(WAIT_TOOL);
    expect(told.texts[0]).toMatch(/^\[user\] Your opponent bet 1 chip/);
    const fold = await p2.reply("<action>fold</action>");
    expect(fold.meta["edgegym/step"]).toMatchObject({ seat: "p2", done: true, to_play: null });
    const end = await p1.call(WAIT_TOOL);
    expect(end.texts.join("\n")).toMatch(/Your opponent folded/);
    expect(end.meta["edgegym/step"]).toMatchObject({ done: true });
    const card = (seen: string[]) => /Your card is the (\w+)/.exec(seen.join("\n"))?.[1];
    const [mine, theirs] = [card(p1.seen), card(p2.seen)];
    expect(mine).toBeDefined();
    expect(theirs).toBeDefined();
    expect(p1.seen.join("\n")).not.toContain(`the ${theirs}`);
    expect(p2.seen.join("\n")).not.toContain(`the ${mine}`);
    expect(p2.seen.join("\n")).not.toContain("my card is strong");
  });

  it("refuses a seat it cannot play, with the stable codes", async () => {
    const app = setup();
    const vsMinimax = (await app.call("POST", "/v1/envs/tic-tac-toe-2p/episodes", { seed: 1, seats: { o: "minimax" } })).json.episode_id as string;
    expect(await refusedConnect(agent(app, vsMinimax, "o"))).toMatchObject({ code: "seat_not_client", status: 409 });
    expect(await refusedConnect(agent(app, vsMinimax, "z"))).toMatchObject({ code: "unknown_seat", status: 422 });
    const single = (await app.call("POST", "/v1/envs/reverse-text/episodes", { index: 0 })).json.episode_id as string;
    expect(await refusedConnect(agent(app, single, "x"))).toMatchObject({ code: "seats_unsupported", status: 422 });
    // A finished seated episode is still shown as its seat, never as the whole log.
    const hand = (await app.call("POST", "/v1/envs/kuhn-poker/episodes", { index: 2 })).json.episode_id as string;
    expect((await app.call("POST", `/v1/episodes/${hand}/step`, { turn: 0, message: { role: "assistant", content: "<action>bet</action>" } })).json.done).toBe(true);
    const after = await agent(app, hand);
    expect(after.client.getInstructions()).toMatch(/as seat "p1"/);
    expect(after.client.getInstructions()).not.toMatch(/You are player 2/);
  });
});
