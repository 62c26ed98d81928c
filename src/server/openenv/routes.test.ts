import { afterEach, describe, expect, it } from "vitest";
import { inProcessApp } from "../../../test/support/in-process.js";

// The OpenEnv HTTP routes in-process: answers in openenv-core's shapes, errors in FastAPI's
// `{"detail": …}` with edgegym's code inside, retries applied once, auth on every route.
let opened: ReturnType<typeof inProcessApp>[] = [];
function app(config: Parameters<typeof inProcessApp>[0] = {}) {
  const built = inProcessApp(config);
  opened.push(built);
  return built;
}
afterEach(() => {
  for (const a of opened) a.close();
  opened = [];
});

const reverse = (s: string) => Array.from(s).reverse().join("");

describe("OpenEnv HTTP routes", () => {
  it("reset, step and state answer in OpenEnv's shapes, with the reward once done", async () => {
    const { call } = app();
    const reset = await call("POST", "/openenv/reverse-text/reset", { index: 0 });
    expect(reset.status).toBe(200);
    expect(Object.keys(reset.json)).toEqual(["observation", "reward", "done"]);
    expect(reset.json).toMatchObject({ reward: null, done: false, observation: { turn: 0, env_id: "reverse-text", resumed: false, score: null } });
    const obs = reset.json.observation;
    const step = await call("POST", "/openenv/reverse-text/step", { episode_id: obs.episode_id, action: { content: `<answer>${reverse(obs.messages.at(-1).content)}</answer>`, turn: 0 } });
    expect(step.status, step.text).toBe(200);
    expect(step.json.done).toBe(true);
    expect(step.json.reward).toBeCloseTo(1.2, 10);
    expect(step.json.observation.score.reward).toBe(step.json.reward);
    const state = await call("GET", `/openenv/reverse-text/state?episode_id=${obs.episode_id}`);
    expect(state.json).toMatchObject({ episode_id: obs.episode_id, step_count: 1, status: "done", done: true });
    // The same episode through the native route: one transcript, not two.
    const native = await call("GET", `/v1/episodes/${obs.episode_id}`);
    expect(native.json.messages.at(-1).role).toBe("assistant");
    expect(native.json.score.reward).toBe(step.json.reward);
  });

  it("an empty reset body is a reset with defaults, as in OpenEnv", async () => {
    const { call } = app();
    const reset = await call("POST", "/openenv/reverse-text/reset");
    expect(reset.status).toBe(200);
    expect(reset.json.observation.split).toBe("train");
  });

  it("a retried step returns the stored answer byte for byte; a different one at that turn is 409", async () => {
    const { call } = app();
    const obs = (await call("POST", "/openenv/tic-tac-toe/reset", { seed: 2, args: { opponent: "random" } })).json.observation;
    const body = { episode_id: obs.episode_id, action: { content: "<move>5</move>", turn: 0 } };
    const first = await call("POST", "/openenv/tic-tac-toe/step", body);
    const again = await call("POST", "/openenv/tic-tac-toe/step", body);
    expect(again.text).toBe(first.text);
    expect((await call("GET", `/openenv/tic-tac-toe/state?episode_id=${obs.episode_id}`)).json.step_count).toBe(1);
    const clash = await call("POST", "/openenv/tic-tac-toe/step", { ...body, action: { content: "<move>1</move>", turn: 0 } });
    expect(clash.status).toBe(409);
    expect(clash.json.detail).toMatchObject({ code: "turn_conflict", details: { episode_turn: 1 } });
  });

  it("reset with episode_id continues the episode: whole transcript, current turn", async () => {
    const { call } = app();
    const obs = (await call("POST", "/openenv/tic-tac-toe/reset", { seed: 2, args: { opponent: "random" } })).json.observation;
    await call("POST", "/openenv/tic-tac-toe/step", { episode_id: obs.episode_id, action: { content: "<move>5</move>", turn: 0 } });
    const resumed = await call("POST", "/openenv/tic-tac-toe/reset", { episode_id: obs.episode_id });
    expect(resumed.json).toMatchObject({ done: false, reward: null, observation: { episode_id: obs.episode_id, turn: 1, resumed: true } });
    expect(resumed.json.observation.messages.slice(0, obs.messages.length)).toEqual(obs.messages);
    expect(resumed.json.observation.messages[obs.messages.length]).toEqual({ role: "assistant", content: "<move>5</move>" });
    expect(resumed.json.observation.tools).toEqual([]);

    const mixed = await call("POST", "/openenv/tic-tac-toe/reset", { episode_id: obs.episode_id, seed: 3 });
    expect([mixed.status, mixed.json.detail.code]).toEqual([400, "invalid_request"]);
    const elsewhere = await call("POST", "/openenv/reverse-text/reset", { episode_id: obs.episode_id });
    expect([elsewhere.status, elsewhere.json.detail.message]).toEqual([400, expect.stringContaining("/openenv/tic-tac-toe")]);
    const unknown = await call("POST", "/openenv/tic-tac-toe/reset", { episode_id: "ep_nope" });
    expect([unknown.status, unknown.json.detail.code]).toEqual([404, "episode_not_found"]);
  });

  it("step, state and list_tools on another environment's path are refused, as resume is, and apply nothing", async () => {
    const { call } = app();
    const obs = (await call("POST", "/openenv/tic-tac-toe/reset", { seed: 2, args: { opponent: "random" } })).json.observation;
    const id = obs.episode_id as string;
    const resume = await call("POST", "/openenv/reverse-text/reset", { episode_id: id });
    expect([resume.status, resume.json.detail.code]).toEqual([400, "invalid_request"]);
    const { request_id: _resumeRequest, ...mismatch } = resume.json.detail;
    const attempts = [
      await call("POST", "/openenv/reverse-text/step", { episode_id: id, action: { content: "<move>5</move>", turn: 0 } }),
      await call("POST", "/openenv/reverse-text/step", { episode_id: id, action: { type: "call_tool", tool_name: "calculator", arguments: {}, turn: 0 } }),
      await call("POST", "/openenv/reverse-text/step", { episode_id: id, action: { type: "list_tools" } }),
      await call("GET", `/openenv/reverse-text/state?episode_id=${id}`),
    ];
    for (const res of attempts) {
      expect(res.status, res.text).toBe(400);
      const { request_id: _requestId, ...detail } = res.json.detail;
      expect(detail).toEqual(mismatch);
    }
    // No move was applied to the tic-tac-toe episode.
    const native = await call("GET", `/v1/episodes/${id}`);
    expect([native.json.turn, native.json.messages.length]).toEqual([0, obs.messages.length]);
    const own = await call("POST", "/openenv/tic-tac-toe/step", { episode_id: id, action: { content: "<move>5</move>", turn: 0 } });
    expect([own.status, own.json.observation.turn]).toEqual([200, 1]);
  });

  it("bad input is 4xx in FastAPI's shape", async () => {
    const { call } = app();
    const extra = await call("POST", "/openenv/reverse-text/reset", { seed: 1, options: {} });
    expect(extra.status).toBe(422);
    expect(extra.json.detail[0]).toMatchObject({ type: "unrecognized_keys", loc: ["body"] });
    const negative = await call("POST", "/openenv/reverse-text/reset", { seed: -1 });
    expect([negative.status, negative.json.detail[0].loc]).toEqual([422, ["body", "seed"]]);
    const obs = (await call("POST", "/openenv/reverse-text/reset", {})).json.observation;
    const noTurn = await call("POST", "/openenv/reverse-text/step", { episode_id: obs.episode_id, action: { content: "x" } });
    expect([noTurn.status, noTurn.json.detail[0].loc]).toEqual([422, ["body", "action", "turn"]]);
    const noEpisode = await call("POST", "/openenv/reverse-text/step", { action: { content: "x", turn: 0 } });
    expect([noEpisode.status, noEpisode.json.detail[0].loc]).toEqual([422, ["body", "episode_id"]]);
    const malformed = await call("POST", "/openenv/reverse-text/step", "{nope");
    expect([malformed.status, malformed.json.detail.code]).toEqual([400, "malformed_json"]);
    const proto = await call("POST", "/openenv/reverse-text/step", '{"action": {"__proto__": {}}}');
    expect([proto.status, proto.json.detail.code]).toEqual([400, "invalid_request"]);
    const text = await call("POST", "/openenv/reverse-text/reset", undefined, { "content-type": "text/plain", "content-length": "2" });
    expect(text.status).toBeGreaterThanOrEqual(400);
    const state = await call("GET", "/openenv/reverse-text/state");
    expect([state.status, state.json.detail[0].loc]).toEqual([422, ["query", "episode_id"]]);
    const env = await call("POST", "/openenv/nope/reset", {});
    expect([env.status, env.json.detail.code]).toEqual([404, "env_not_found"]);
    const method = await call("GET", "/openenv/reverse-text/reset");
    expect(method.status).toBe(405);
    expect(method.json.detail.code).toBe("method_not_allowed");
  });

  it("a body over the limit is 413 before it is read", async () => {
    const { call } = app({ config: { bodyLimitBytes: 1000 } });
    const big = await call("POST", "/openenv/reverse-text/reset", { metadata: { pad: "x".repeat(2000) } });
    expect([big.status, big.json.detail.code]).toEqual([413, "payload_too_large"]);
  });

  it("schema, metadata and health answer for every environment", async () => {
    const { call } = app();
    const schema = await call("GET", "/openenv/tool-math/schema");
    expect(Object.keys(schema.json)).toEqual(["action", "observation", "state"]);
    const actions = schema.json.action.anyOf.map((a: { $ref: string }) => schema.json.action.$defs[a.$ref.replace("#/$defs/", "")]);
    expect(actions.map((a: { properties: Record<string, unknown> }) => Object.keys(a.properties))).toEqual([
      ["type", "tool_name", "arguments", "turn", "seat", "metadata"],
      ["type", "metadata"],
      ["role", "content", "tool_calls", "name", "reasoning_content", "turn", "seat", "metadata"],
    ]);
    expect(schema.json.state.required).toEqual(["episode_id", "step_count", "env_id"]);
    expect((await call("GET", "/openenv/tool-math/metadata")).json).toMatchObject({ name: "tool-math", version: expect.any(String) });
    expect((await call("GET", "/openenv/tool-math/health")).json).toEqual({ status: "healthy" });
  });

  it("openenv-core's tool actions: list_tools in MCP's shape, call_tool as a recorded step", async () => {
    const { call } = app();
    const before = await call("POST", "/openenv/tool-math/step", { episode_id: "ep_none", action: { type: "list_tools" } });
    expect([before.status, before.json.detail.code]).toEqual([404, "episode_not_found"]);
    const obs = (await call("POST", "/openenv/tool-math/reset", { seed: 11 })).json.observation;
    const listed = await call("POST", "/openenv/tool-math/step", { episode_id: obs.episode_id, action: { type: "list_tools" } });
    expect(listed.json.observation.tools).toEqual([{ name: "calculator", description: expect.any(String), input_schema: expect.objectContaining({ type: "object" }) }]);
    expect(listed.json.observation.turn).toBe(0);
    const expression = "(4682 + 4613 + 6417 + 3065 + 1802 + 1707 + 4860 + 9853) / 8";
    const body = { episode_id: obs.episode_id, action: { type: "call_tool", tool_name: "calculator", arguments: { expression }, turn: 0 } };
    const called = await call("POST", "/openenv/tool-math/step", body);
    expect(called.json).toMatchObject({ done: false, reward: null, observation: { turn: 1, tool_name: "calculator", result: "4624.875", error: null } });
    expect((await call("POST", "/openenv/tool-math/step", body)).text).toBe(called.text);
    const wrong = await call("POST", "/openenv/tool-math/step", { episode_id: obs.episode_id, action: { type: "call_tool", tool_name: "nope", turn: 1 } });
    expect(wrong.json.observation).toMatchObject({ tool_name: "nope", error: null, result: expect.stringContaining("nope") });
    const native = await call("GET", `/v1/episodes/${obs.episode_id}`);
    expect(native.json.messages[obs.messages.length].tool_calls[0]).toEqual({ id: "call_0", type: "function", function: { name: "calculator", arguments: JSON.stringify({ expression }) } });
    const unknownType = await call("POST", "/openenv/tool-math/step", { episode_id: obs.episode_id, action: { type: "dance", turn: 2 } });
    expect(unknownType.status).toBe(422);
  });

  it("the socket route says so when the runtime gives no WebSocket upgrade", async () => {
    const { call } = app();
    const ws = await call("GET", "/openenv/reverse-text/ws");
    expect([ws.status, ws.json.detail.code]).toEqual([503, "service_unavailable"]);
  });

  it("every route needs the Bearer key when the server has keys, and tenants stay apart", async () => {
    const { call } = app({ config: { apiKeys: ["alice:sk-a", "bob:sk-b"] } });
    for (const [method, path] of [
      ["POST", "/openenv/reverse-text/reset"],
      ["POST", "/openenv/reverse-text/step"],
      ["GET", "/openenv/reverse-text/state?episode_id=ep_x"],
      ["GET", "/openenv/reverse-text/schema"],
      ["GET", "/openenv/reverse-text/metadata"],
      ["GET", "/openenv/reverse-text/health"],
      ["GET", "/openenv/reverse-text/ws"],
    ] as const) {
      const res = await call(method, path);
      expect([path, res.status, res.json.detail.code]).toEqual([path, 401, "unauthorized"]);
      expect(res.headers.get("www-authenticate")).toBe("Bearer");
    }
    const alice = { authorization: "Bearer sk-a" };
    const obs = (await call("POST", "/openenv/reverse-text/reset", {}, alice)).json.observation;
    const bob = await call("POST", "/openenv/reverse-text/reset", { episode_id: obs.episode_id }, { authorization: "Bearer sk-b" });
    expect([bob.status, bob.json.detail.code]).toEqual([404, "episode_not_found"]);
  });
});
