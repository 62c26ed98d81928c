import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { builtinEnvs, EnvRegistry } from "../envs/index.js";
import { contentText, EvalRollout, type Split } from "../protocol/index.js";
import { startNodeServer, type RunningServer } from "../server/node/serve.js";
import { bisectingPlayer, calculator, guessNumber, toolUsingModel } from "../../test/support/eval-envs.js";
import { lastUserText, reverseLastUser, startScriptedModel, type ScriptedModelServer, type ScriptedPolicy } from "../../test/support/scripted-model.js";
import type { EpisodeDriver } from "./driver.js";
import { HttpDriver } from "./http-driver.js";
import { InProcessDriver } from "./in-process-driver.js";
import { OpenAIChatModel } from "./openai-model.js";
import { pendingRollouts, resolveSplit, rolloutSeed } from "./plan.js";
import type { RolloutSpec } from "./rollout.js";
import { runEval, type EvalRunResult } from "./runner.js";
import { SummaryBuilder } from "./stats.js";

const envs = [...builtinEnvs, guessNumber, calculator];
const registry = new EnvRegistry("node", envs);
const models: ScriptedModelServer[] = [];
afterEach(async () => {
  while (models.length) await models.pop()?.close();
});

async function model(policy: ScriptedPolicy, timeoutMs = 10_000) {
  const server = await startScriptedModel(policy);
  models.push(server);
  return { server, chat: new OpenAIChatModel({ model: "scripted", baseUrl: server.baseUrl, timeoutMs }) };
}

async function run(
  driver: EpisodeDriver,
  chat: OpenAIChatModel,
  envId: string,
  opts: { n?: number; r?: number; concurrency?: number; maxRetries?: number; sampling?: Record<string, unknown>; envArgs?: Record<string, unknown>; signal?: AbortSignal; onRow?: (row: EvalRollout) => void } = {},
): Promise<{ rows: EvalRollout[]; result: EvalRunResult }> {
  const info = await driver.describe(envId);
  const split: Split = resolveSplit(info, undefined);
  const n = opts.n ?? 2;
  const examples = await driver.examples(envId, split, 0, n);
  const specs: RolloutSpec[] = pendingRollouts(n, opts.r ?? 2, new Set()).map(({ exampleId, rolloutIndex }) => ({
    example: examples[exampleId] as (typeof examples)[number],
    rolloutIndex,
    seed: rolloutSeed(7, exampleId, rolloutIndex),
  }));
  const rows: EvalRollout[] = [];
  const result = await runEval({
    envId,
    split,
    envArgs: opts.envArgs ?? {},
    driver,
    model: chat,
    sampling: opts.sampling ?? {},
    retry: { maxRetries: opts.maxRetries ?? 2, baseDelayMs: 1 },
    runKey: "test",
    specs,
    concurrency: opts.concurrency ?? 4,
    ...(opts.signal ? { signal: opts.signal } : {}),
    onRollout: (row) => {
      rows.push(row);
      opts.onRow?.(row);
    },
  });
  rows.sort((a, b) => a.example_id - b.example_id || a.rollout_index - b.rollout_index);
  return { rows, result };
}

describe("in-process rollouts", () => {
  it("runs reverse-text single-turn rollouts and writes vf-eval rows", async () => {
    const { server, chat } = await model(reverseLastUser);
    const driver = new InProcessDriver(registry);
    const { rows, result } = await run(driver, chat, "reverse-text", { n: 3, r: 2, sampling: { max_tokens: 64, temperature: 0 } });
    expect(result).toEqual({ completed: 6, interrupted: false, fatal: null });
    expect(rows).toHaveLength(6);
    for (const row of rows) {
      expect(EvalRollout.parse(row)).toBeTruthy();
      expect(row).toMatchObject({ task: "reverse-text", reward: expect.closeTo(1.2, 10), stop_condition: "single_turn", is_completed: true, is_truncated: false, error: null, finish_reasons: ["stop"] });
      expect(row.metrics).toEqual({ lcs_ratio: 1, format: 1, turns: 1 });
      expect([row.lcs_ratio, row.format, row.turns]).toEqual([1, 1, 1]);
      expect(row.prompt.map((m) => m.role)).toEqual(["system", "user"]);
      expect(row.completion).toHaveLength(1);
      expect(row.answer).toBe(Array.from(row.prompt[1]?.content as string).reverse().join(""));
      expect(row.token_usage.input_tokens).toBeGreaterThan(0);
      expect(row.timing.total_ms).toBeGreaterThanOrEqual(row.timing.generation_ms);
    }
    expect(rows.map((r) => [r.example_id, r.rollout_index])).toEqual([[0, 0], [0, 1], [1, 0], [1, 1], [2, 0], [2, 1]]);
    expect(server.requests[0]).toMatchObject({ model: "scripted", max_tokens: 64, temperature: 0 });
    expect(server.requests[0]?.tools).toBeUndefined();
    expect(driver.openEpisodes).toBe(0);
  });

  it("plays a multi-turn game to the end: model turns and environment replies alternate", async () => {
    const { chat } = await model(bisectingPlayer);
    const { rows } = await run(new InProcessDriver(registry), chat, "guess-number", { n: 3, r: 1 });
    for (const row of rows) {
      expect(row).toMatchObject({ reward: 1, stop_condition: "guessed", is_completed: true, error: null });
      const roles = row.completion.map((m) => m.role);
      expect(roles.length % 2).toBe(0);
      expect(roles.every((role, i) => role === (i % 2 === 0 ? "assistant" : "user"))).toBe(true);
      expect(row.metrics.turns).toBe(roles.length / 2);
      expect(row.metrics.guesses).toBe(row.metrics.turns);
      expect(row.metrics.turns).toBeLessThanOrEqual(7);
    }
  });

  it("sends tool calls to the environment and tool results back to the model", async () => {
    const { server, chat } = await model(toolUsingModel);
    const { rows } = await run(new InProcessDriver(registry), chat, "calculator", { n: 3, r: 1 });
    expect(rows.map((r) => r.reward)).toEqual([1, 1, 1]);
    const first = rows[0] as EvalRollout;
    expect(first.completion.map((m) => m.role)).toEqual(["assistant", "tool", "assistant", "tool", "assistant"]);
    expect(first.completion[1]).toMatchObject({ role: "tool", tool_call_id: "call_0_m", content: "391" });
    expect(first.completion[3]).toMatchObject({ role: "tool", content: "395" });
    expect(first).toMatchObject({ stop_condition: "no_tool_calls", finish_reasons: ["tool_calls", "tool_calls", "stop"], metrics: { correct: 1, tool_use: 2, turns: 3, tool_calls: 2 } });
    expect(first.tool_defs?.map((t) => t.function.name)).toEqual(["multiply", "add"]);
    expect(server.requests[0]?.tools?.map((t) => t.function.name)).toEqual(["multiply", "add"]);
    // The second request carries the first tool result back to the model.
    const followUp = server.requests.find((r) => r.messages.some((m) => m.role === "tool" && m.content === "391"));
    expect(followUp?.messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: "call_0_m", content: "391" });
    expect(followUp?.messages.at(-2)).toMatchObject({ role: "assistant", tool_calls: [{ function: { name: "multiply" } }] });
  });
});

describe("model failures", () => {
  it("retries 429 and 5xx with backoff (honouring Retry-After) and then succeeds", async () => {
    const { server, chat } = await model((req, n) => (n === 1 ? { status: 429, headers: { "retry-after-ms": "5" } } : n === 2 ? { status: 503 } : reverseLastUser(req, n)));
    const { rows } = await run(new InProcessDriver(registry), chat, "reverse-text", { n: 1, r: 1, maxRetries: 2 });
    expect(rows[0]).toMatchObject({ error: null, reward: expect.closeTo(1.2, 10) });
    expect(server.requests).toHaveLength(3);
  });

  it("records a rollout that still fails after its retries, with its error, and counts it", async () => {
    const [first] = await new InProcessDriver(registry).examples("reverse-text", "eval", 0, 1);
    const firstParagraph = contentText(first?.prompt.at(-1)?.content);
    const { server, chat } = await model((req, n) => (lastUserText(req).startsWith(firstParagraph) ? { status: 500, message: `boom ${n}` } : reverseLastUser(req, n)));
    const { rows, result } = await run(new InProcessDriver(registry), chat, "reverse-text", { n: 2, r: 2, maxRetries: 1 });
    expect(result.completed).toBe(4);
    const failed = rows.filter((r) => r.error);
    expect(failed).toHaveLength(2);
    for (const row of failed) {
      expect(row).toMatchObject({ example_id: 0, reward: 0, is_completed: false, stop_condition: null, error: { error: "model_server_error", attempts: 2 } });
      expect(row.error?.error_chain_str).toMatch(/500/);
    }
    expect(server.requests.filter((r) => lastUserText(r).startsWith(firstParagraph))).toHaveLength(4);
    const summary = new SummaryBuilder(0.5, 2);
    rows.forEach((r) => summary.add(r));
    const built = summary.build(1000);
    expect(built).toMatchObject({ rollouts: 4, errors: 2, error_rate: 0.5, errors_by_code: { model_server_error: 2 }, stop_conditions: { error: 2, single_turn: 2 } });
    expect(built.pass_at_k).toEqual({ "1": 0.5, "2": 0.5 });
  });

  it("times out a model request that never answers", async () => {
    const { chat } = await model(() => ({ hang: true }), 150);
    const { rows } = await run(new InProcessDriver(registry), chat, "reverse-text", { n: 1, r: 1, maxRetries: 1 });
    expect(rows[0]?.error).toMatchObject({ error: "model_timeout", attempts: 2 });
  });

  it("stops at the first failure every rollout would repeat", async () => {
    const { chat } = await model(() => ({ status: 401, message: "bad key" }));
    const { rows, result } = await run(new InProcessDriver(registry), chat, "reverse-text", { n: 5, r: 2, concurrency: 1 });
    expect(result.fatal?.error).toBe("model_auth_error");
    expect(rows).toHaveLength(1);
  });

  it("on abort keeps finished rollouts and records none half-done", async () => {
    const controller = new AbortController();
    const { chat } = await model(async (req, n) => {
      if (n > 3) await new Promise((r) => setTimeout(r, 5_000));
      return reverseLastUser(req, n);
    });
    const done: EvalRollout[] = [];
    const { result } = await run(new InProcessDriver(registry), chat, "reverse-text", {
      n: 4,
      r: 2,
      concurrency: 2,
      signal: controller.signal,
      onRow: (row) => {
        done.push(row);
        if (done.length === 3) setTimeout(() => controller.abort(), 20);
      },
    });
    expect(result.interrupted).toBe(true);
    expect(result.completed).toBe(3);
    expect(done.every((r) => r.error === null)).toBe(true);
  });
});

describe("through an edgegym server (--server)", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startNodeServer({ port: 0, host: "127.0.0.1", dbPath: ":memory:", extraEnvs: [guessNumber, calculator], reapIntervalMs: 0 });
  });
  afterAll(async () => {
    await server.close();
  });

  it.each([
    ["reverse-text", reverseLastUser],
    ["guess-number", bisectingPlayer],
    ["calculator", toolUsingModel],
  ] as const)("%s gives the same rollouts over HTTP as in-process", async (envId, policy) => {
    const { chat } = await model(policy);
    const http = new HttpDriver({ baseUrl: server.url, retry: { maxRetries: 2, baseDelayMs: 1 } });
    const local = await run(new InProcessDriver(registry), chat, envId, { n: 2, r: 2 });
    const remote = await run(http, chat, envId, { n: 2, r: 2 });
    const strip = (r: EvalRollout) => ({ example_id: r.example_id, rollout_index: r.rollout_index, prompt: r.prompt, completion: r.completion, reward: r.reward, metrics: r.metrics, stop: r.stop_condition, seed: r.seed });
    expect(remote.rows.map(strip)).toEqual(local.rows.map(strip));
    expect(remote.rows.every((r) => r.episode_id?.startsWith("ep_"))).toBe(true);
    expect(local.rows.every((r) => r.episode_id === null)).toBe(true);
  });

  it("reports an unknown environment on the server as a run-stopping failure", async () => {
    const http = new HttpDriver({ baseUrl: server.url, retry: { maxRetries: 0 } });
    await expect(http.describe("nope")).rejects.toMatchObject({ code: "env_rejected", serverCode: "env_not_found" });
  });
});
