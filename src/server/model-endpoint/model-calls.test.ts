import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { episodeRow, OPENING } from "../../../test/support/episode-rows.js";
import { startScriptedUpstream, type ScriptedUpstream } from "../../../test/support/scripted-upstream.js";
import type { AgentState } from "../../envs/sandbox/agent-state.js";
import { DEFAULT_CONFIG, type ServerConfig } from "../context.js";
import { openNodeDatabase } from "../db/node-sqlite.js";
import { sqliteStores } from "../db/stores.js";
import { episodeKeyHash, mintEpisodeKey } from "./episode-key.js";
import { ModelCalls } from "./model-calls.js";
import { WIRES } from "./wires.js";

/*
 * The endpoint's core over a real SQLite store and a scripted upstream (its token ids are a
 * test double's, made up from bytes): a vLLM upstream's ids and logprobs land in the turn's
 * `sampled` and leave the agent's answer unless it asked; limits end the episode with their
 * own stop reasons; an upstream failure is answered as the upstream gave it and recorded.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are asserted field by field
type Json = any;

const NOW = 10_000;
let upstream: ScriptedUpstream;

beforeAll(async () => {
  upstream = await startScriptedUpstream({ replies: Array.from({ length: 20 }, (_, i) => ({ content: `reply ${i}` })) });
});
afterAll(() => upstream.close());

async function setup(agent: Partial<AgentState> = {}, upstreamOptions: { vllm?: boolean; url?: string } = {}) {
  const database = openNodeDatabase(":memory:");
  onTestFinished(() => database.close());
  const { episodes } = sqliteStores(database.db);
  const key = mintEpisodeKey();
  const state: { agent: AgentState } = {
    agent: { keyHash: await episodeKeyHash(key), upstream: "up", model: "served-model", command: "true", timeoutSeconds: 60, maxCalls: 10, maxTokens: 1_000_000, startedAt: NOW, pid: null, calls: 0, tokens: 0, result: null, ...agent },
  };
  await episodes.insert(episodeRow("ep_h", { state, createdAt: NOW, updatedAt: NOW, expiresAt: NOW + 60_000 }), OPENING);
  const config: ServerConfig = {
    ...DEFAULT_CONFIG,
    modelUpstreams: new Map([["up", { name: "up", baseUrl: upstreamOptions.url ?? upstream.url, apiKey: "sk-secret", vllm: upstreamOptions.vllm ?? false }]]),
  };
  return { calls: new ModelCalls(episodes, config, () => NOW), store: episodes, key };
}

const ask = { model: "whatever", messages: [{ role: "user", content: "hello" }] };

describe("ModelCalls", () => {
  it("records a vLLM upstream's prompt ids, completion ids and logprobs, and answers the agent without them", async () => {
    const { calls, store, key } = await setup({}, { vllm: true });
    const answer = await calls.call("ep_h", key, WIRES.chat, ask);
    expect(answer.kind).toBe("json");
    const body = (answer as { body: Json }).body;
    expect(body.choices[0].message.content).toMatch(/^reply /);
    expect(body.choices[0].token_ids).toBeUndefined();
    expect(body.prompt_token_ids).toBeUndefined();
    expect(body.choices[0].logprobs).toBeNull();
    const sent = upstream.received.at(-1)?.body as Json;
    expect(sent).toMatchObject({ model: "served-model", stream: false, return_token_ids: true, logprobs: true });
    const [turn] = await store.readTurns([{ episodeId: "ep_h", from: 1, to: 1 }]);
    const sampled = turn?.sampled as Json;
    expect(sampled.token_ids.length).toBeGreaterThan(0);
    expect(sampled.logprobs).toHaveLength(sampled.token_ids.length);
    expect(sampled.prompt_token_ids.length).toBeGreaterThan(0);
    expect((turn?.call as Json).request).toEqual(ask);
    expect((turn?.call as Json).response).toEqual(body);
    expect(turn?.message).toEqual({ role: "assistant", content: body.choices[0].message.content });
    const head = await store.get("ep_h");
    expect((head?.state as Json).agent).toMatchObject({ calls: 1 });
    expect((head?.state as Json).agent.tokens).toBeGreaterThan(0);
  });

  it("passes the token fields on when the agent asks for them itself", async () => {
    const { calls, key } = await setup({}, { vllm: true });
    const answer = (await calls.call("ep_h", key, WIRES.chat, { ...ask, return_token_ids: true, logprobs: true })) as { body: Json };
    expect(answer.body.choices[0].token_ids.length).toBeGreaterThan(0);
    expect(answer.body.choices[0].logprobs.content.length).toBeGreaterThan(0);
  });

  it("refuses a wrong key, and ends the episode with call_limit or token_limit when they are used", async () => {
    const { calls, store, key } = await setup({ maxCalls: 1 });
    expect(await calls.call("ep_h", "egk_wrong", WIRES.chat, ask)).toMatchObject({ status: 401 });
    expect(await calls.call("ep_h", null, WIRES.chat, ask)).toMatchObject({ status: 401 });
    expect(await calls.call("ep_h", key, WIRES.chat, ask)).toMatchObject({ kind: "json", status: 200 });
    expect(await calls.call("ep_h", key, WIRES.chat, ask)).toMatchObject({ status: 429 });
    expect(await store.get("ep_h")).toMatchObject({ status: "done", stopReason: "call_limit", truncated: true, turn: 1 });
    expect(await calls.call("ep_h", key, WIRES.chat, ask)).toMatchObject({ status: 410 });

    const tokens = await setup({ maxTokens: 1, tokens: 1 });
    expect(await tokens.calls.call("ep_h", tokens.key, WIRES.chat, ask)).toMatchObject({ status: 429 });
    expect(await tokens.store.get("ep_h")).toMatchObject({ status: "done", stopReason: "token_limit" });
  });

  it("answers an unreachable upstream with 502, records the failed call and counts it", async () => {
    const { calls, store, key } = await setup({}, { url: "http://127.0.0.1:9/v1" });
    const answer = await calls.call("ep_h", key, WIRES.chat, ask);
    expect(answer).toMatchObject({ kind: "json", status: 502 });
    expect((answer as { body: Json }).body.error.message).toContain("cannot reach the upstream");
    const [turn] = await store.readTurns([{ episodeId: "ep_h", from: 1, to: 1 }]);
    expect(turn?.call).toMatchObject({ status: 502, usage: null });
    expect((turn?.call as Json).error).toContain("cannot reach the upstream");
    expect(turn?.sampled).toBeNull();
  });

  it("streams a chat answer as chunks when asked, and records it assembled", async () => {
    const { calls, store, key } = await setup();
    const answer = await calls.call("ep_h", key, WIRES.chat, { ...ask, stream: true, stream_options: { include_usage: true } });
    expect(answer.kind).toBe("sse");
    const events = (answer as { events: string[] }).events.join("");
    expect(events).toContain("chat.completion.chunk");
    expect(events.trim().endsWith("data: [DONE]")).toBe(true);
    const [turn] = await store.readTurns([{ episodeId: "ep_h", from: 1, to: 1 }]);
    expect((turn?.call as Json).stream).toBe(true);
    expect((turn?.call as Json).response.object).toBe("chat.completion");
  });
});
