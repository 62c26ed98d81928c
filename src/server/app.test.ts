import { afterAll, afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineRubric, defineTool, rowsDataset, toolEnv } from "../envs/index.js";
import { ERROR_STATUS } from "../protocol/index.js";
import { inProcessApp } from "../../test/support/in-process.js";
import { describeHttpConformance } from "../../test/conformance/http-conformance.js";

const apps: ReturnType<typeof inProcessApp>[] = [];
function setup(opts?: Parameters<typeof inProcessApp>[0]) {
  const app = inProcessApp(opts);
  apps.push(app);
  return app;
}
afterEach(() => {
  while (apps.length) apps.pop()?.close();
});

// The HTTP contract every server keeps (reset, step, retries, idempotency, close, errors,
// auth, limits), run against the app in this process; this file keeps what the suite does not cover.
const conformance = inProcessApp({ config: { apiKeys: ["sk-in-process"] } });
afterAll(() => conformance.close());
describeHttpConformance({ name: "in-process app", baseUrl: () => "http://edgegym.test", apiKey: "sk-in-process", runtime: "node", fetch: (request) => Promise.resolve(conformance.app.fetch(request)) });

const answer = (text: string) => ({ role: "assistant", content: `<answer>${text}</answer>` });

describe("environments", () => {
  it("pages examples and rejects an unknown env", async () => {
    const { call } = setup();
    const page = await call("GET", "/v1/envs/reverse-text/examples?split=eval&offset=20&limit=5");
    expect(page.status).toBe(200);
    expect(page.json.total).toBe(22);
    expect(page.json.examples.map((e: { index: number }) => e.index)).toEqual([20, 21]);
    const missing = await call("GET", "/v1/envs/nope");
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe("env_not_found");
    const badQuery = await call("GET", "/v1/envs/reverse-text/examples?limit=0");
    expect(badQuery.json.error.code).toBe("invalid_request");
  });
});

describe("episodes", () => {
  it("expires an episode after its TTL, refreshes the TTL on activity, and reaps it", async () => {
    const { call, advance, store, now } = setup({ config: { defaultTtlSeconds: 60, maxTtlSeconds: 120 } });
    const capped = await call("POST", "/v1/envs/reverse-text/episodes", { index: 0, ttl_seconds: 10_000 });
    expect(Date.parse(capped.json.expires_at) - now()).toBe(120_000);
    const id = (await call("POST", "/v1/envs/multi-echo/episodes", {})).json?.episode_id;
    expect(id).toBeUndefined(); // no such env: just checking the 404 path does not throw
    const ep = (await call("POST", "/v1/envs/reverse-text/episodes", { index: 0 })).json.episode_id;
    advance(50_000);
    // A step is activity: the episode now lives 60 s from here, not from its reset.
    const step = await call("POST", `/v1/episodes/${ep}/step`, { turn: 0, message: answer("x") });
    expect(Date.parse(step.json.expires_at) - now()).toBe(60_000);
    advance(11_000);
    // 61 s after the reset: past the first expiry, alive only because the step refreshed it.
    const alive = await call("GET", `/v1/episodes/${ep}`);
    expect(alive.status, alive.text).toBe(200);
    expect(Date.parse(alive.json.expires_at) - now()).toBe(49_000);
    advance(50_000);
    const gone = await call("GET", `/v1/episodes/${ep}`);
    expect([gone.status, gone.json.error.code]).toEqual([410, "episode_expired"]);
    const reaped = await store.reapExpired(now());
    expect(reaped.expired).toBeGreaterThanOrEqual(1);
    expect((await call("POST", `/v1/episodes/${ep}/score`)).status).toBe(410);
  });

  it("validates reset bodies and env args", async () => {
    const { call } = setup();
    const unknown = await call("POST", "/v1/envs/reverse-text/episodes", { index: 0, bogus: true });
    expect([unknown.status, unknown.json.error.code]).toEqual([400, "invalid_request"]);
    const args = await call("POST", "/v1/envs/reverse-text/episodes", { args: { nope: 1 } });
    expect([args.status, args.json.error.code]).toEqual([422, "invalid_env_args"]);
    const range = await call("POST", "/v1/envs/reverse-text/episodes", { split: "eval", index: 22 });
    expect([range.status, range.json.error.code]).toEqual([422, "task_out_of_range"]);
    const malformed = await call("POST", "/v1/envs/reverse-text/episodes", "{not json");
    expect([malformed.status, malformed.json.error.code]).toEqual([400, "malformed_json"]);
    const notAssistant = await call("POST", "/v1/episodes/ep_x/step", { turn: 0, message: { role: "user", content: "hi" } });
    expect(notAssistant.status).toBe(400);
  });

  it("replays an episode exactly from its seed", async () => {
    const { call } = setup();
    const a = await call("POST", "/v1/envs/reverse-text/episodes", { seed: 99 });
    const b = await call("POST", "/v1/envs/reverse-text/episodes", { seed: 99 });
    expect(b.json.messages).toEqual(a.json.messages);
    expect(b.json.index).toBe(a.json.index);
  });
});

describe("tools through a step", () => {
  const counterEnv = toolEnv<Record<string, never>, { total: number }>({
    id: "counter",
    version: "1.0.0",
    description: "adds numbers with a stateful tool",
    stateSchema: z.object({ total: z.number() }),
    setup: () => ({ state: { total: 0 } }),
    dataset: rowsDataset({ train: [{ prompt: "Add 2 and 3 with the tool.", answer: "5" }] }),
    tools: [
      defineTool({
        name: "add",
        description: "Adds n to the running total and returns it.",
        parameters: z.object({ n: z.number() }),
        run: ({ n }, ctx) => {
          ctx.state.total += n;
          return String(ctx.state.total);
        },
      }),
      defineTool({ name: "boom", description: "Always fails.", parameters: z.object({}), run: () => { throw new Error("kaput"); } }),
      defineTool({ name: "slow", description: "Never returns in time.", parameters: z.object({}), timeoutMs: 50, run: () => new Promise<string>(() => {}) }),
    ],
    rubric: defineRubric([{ name: "correct", weight: 1, fn: ({ completion, answer, parser }) => Number(parser.parseAnswer(completion) === answer) }]),
  });

  it("executes tool calls on the server, reports failures to the model, and keeps state", async () => {
    const { call } = setup({ envs: [counterEnv] });
    const reset = await call("POST", "/v1/envs/counter/episodes", {});
    expect(reset.json.tools[0].function).toMatchObject({ name: "add", parameters: { type: "object", properties: { n: { type: "number" } } } });
    const id = reset.json.episode_id;
    const calls = [
      { id: "c1", type: "function", function: { name: "add", arguments: '{"n":2}' } },
      { id: "c2", type: "function", function: { name: "add", arguments: '{"n":3}' } },
      { id: "c3", type: "function", function: { name: "boom", arguments: "{}" } },
      { id: "c4", type: "function", function: { name: "slow", arguments: "{}" } },
      { id: "c5", type: "function", function: { name: "add", arguments: '{"n":"x"}' } },
      { id: "c6", type: "function", function: { name: "nope", arguments: "{}" } },
    ];
    const step = await call("POST", `/v1/episodes/${id}/step`, { turn: 0, message: { role: "assistant", content: null, tool_calls: calls } });
    expect(step.status).toBe(200);
    expect(step.json.done).toBe(false);
    const contents = step.json.messages.map((m: { tool_call_id: string; content: string }) => [m.tool_call_id, m.content]);
    expect(contents.slice(0, 2)).toEqual([["c1", "2"], ["c2", "5"]]);
    expect(contents[2][1]).toMatch(/kaput/);
    expect(contents[3][1]).toMatch(/timed out/);
    expect(contents[4][1]).toMatch(/invalid arguments/);
    expect(contents[5][1]).toMatch(/unknown tool/);
    const final = await call("POST", `/v1/episodes/${id}/step`, { turn: 1, message: answer("5") });
    expect(final.json).toMatchObject({ done: true, stop_reason: "no_tool_calls", truncated: false });
    const score = await call("POST", `/v1/episodes/${id}/score`);
    expect(score.json.score).toMatchObject({ reward: 1, metrics: { turns: 2, tool_calls: 6 } });
  });
});

describe("stateless scoring", () => {
  it("scores completions and computes group advantages", async () => {
    const { call } = setup();
    const res = await call("POST", "/v1/envs/reverse-text/score", {
      items: [
        { prompt: "abc", completion: "<answer>cba</answer>", answer: "cba", group: "g" },
        { prompt: "abc", completion: "<answer>abc</answer>", answer: "cba", group: "g" },
        { prompt: "xy", completion: "no tags", answer: "yx" },
      ],
    });
    expect(res.status).toBe(200);
    const [a, b, c] = res.json.results;
    // "abc" vs "cba": LCS is 1 character, so 2·1/6; format is 1 for both tagged answers.
    expect(a.score.reward).toBeCloseTo(1.2, 10);
    expect(b.score.reward).toBeCloseTo(1 / 3 + 0.2, 10);
    const mean = (a.score.reward + b.score.reward) / 2;
    expect(a.advantage).toBeCloseTo(a.score.reward - mean, 10);
    expect(b.advantage).toBeCloseTo(b.score.reward - mean, 10);
    expect(c.advantage).toBeNull();
    expect(res.json.groups).toEqual([{ group: "g", size: 2, mean, std: expect.any(Number) }]);
  });
});

describe("errors, auth and limits", () => {
  it("uses one status per code", () => {
    for (const [code, status] of Object.entries(ERROR_STATUS)) expect(status, code).toBeGreaterThanOrEqual(400);
  });

  it("answers unknown routes with route_not_found", async () => {
    const { call } = setup();
    const res = await call("GET", "/v1/nothing-here");
    expect([res.status, res.json.error.code]).toEqual([404, "route_not_found"]);
  });

  it("serves the OpenAPI document (the /docs page: src/server/console/routes.test.ts)", async () => {
    const { call } = setup();
    const doc = await call("GET", "/openapi.json");
    expect(doc.json.openapi).toBe("3.1.0");
    expect(Object.keys(doc.json.paths)).toContain("/v1/episodes/{episode_id}/step");
  });
});
