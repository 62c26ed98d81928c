import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { completionBudget, defineRubric, envGroup, multiTurnEnv, rowsDataset, type AnyEnvironment } from "../../envs/index.js";
import { contentText } from "../../protocol/index.js";
import { inProcessApp } from "../../../test/support/in-process.js";

// How a step reaches the transcript now that it is stored per turn: an environment (or a
// stop condition) that declares it reads history gets all of it, a fork's prefix
// included; any other reads none, and reading it anyway fails loudly.

const apps: ReturnType<typeof inProcessApp>[] = [];
afterEach(() => {
  while (apps.length) apps.pop()?.close();
});

const rubric = defineRubric<{ n: number }>([{ name: "n", weight: 1, fn: ({ state }) => state?.n ?? 0 }]);
const base = { version: "1.0.0", description: "test", dataset: rowsDataset({ train: [{ prompt: "count" }] }), stateSchema: z.object({ n: z.number() }), setup: () => ({ state: { n: 0 } }), rubric, maxTurns: 50 };

/** Answers with how many messages it saw before this one, and what the last one said. */
const recaller = (id: string, readsHistory: boolean) =>
  multiTurnEnv({
    ...base,
    id,
    readsHistory,
    respond: (state, _message, ctx) => ({
      state: { n: state.n + 1 },
      messages: [{ role: "user", content: `seen ${ctx.messages.length}, last: ${contentText(ctx.messages.at(-1)?.content ?? "")}` }],
    }),
  });

const budgeted = multiTurnEnv({
  ...base,
  id: "budgeted",
  stopConditions: [completionBudget({ maxTokens: 10 })],
  respond: (state) => ({ state: { n: state.n + 1 }, messages: [{ role: "user", content: "go on" }] }),
});

function setup(envs: AnyEnvironment[]) {
  const app = inProcessApp({ envs });
  apps.push(app);
  return app;
}

describe("history on the step path", () => {
  it("gives an environment that declares readsHistory the whole transcript, a fork's prefix included", async () => {
    const { call } = setup([recaller("recall", true)]);
    const id = (await call("POST", "/v1/envs/recall/episodes", {})).json.episode_id as string;
    const first = await call("POST", `/v1/episodes/${id}/step`, { turn: 0, message: { role: "assistant", content: "one" } });
    expect(first.json.messages[0]?.content, (await call("GET", `/v1/episodes/${id}`)).json.error).toBe("seen 1, last: count");
    const second = await call("POST", `/v1/episodes/${id}/step`, { turn: 1, message: { role: "assistant", content: "two" } });
    expect(second.json.messages[0].content).toBe("seen 3, last: seen 1, last: count");
    const fork = (await call("POST", `/v1/episodes/${id}/fork`, { turn: 1 })).json.episodes[0].episode_id as string;
    const onFork = await call("POST", `/v1/episodes/${fork}/step`, { turn: 1, message: { role: "assistant", content: "two" } });
    expect(onFork.json.messages).toEqual(second.json.messages);
  });

  it("ends the episode with env_error, naming the flag, when an environment reads history it did not declare", async () => {
    const { call } = setup([recaller("sneaky", false)]);
    const id = (await call("POST", "/v1/envs/sneaky/episodes", {})).json.episode_id as string;
    const step = await call("POST", `/v1/episodes/${id}/step`, { turn: 0, message: { role: "assistant", content: "one" } });
    expect(step.json).toMatchObject({ done: true, stop_reason: "env_error" });
    const episode = await call("GET", `/v1/episodes/${id}`);
    expect(episode.json.error).toMatch(/readsHistory: true/);
  });

  it("counts a token budget as a running total kept with the episode: no transcript read, forks included", async () => {
    const { call } = setup([budgeted]);
    const id = (await call("POST", "/v1/envs/budgeted/episodes", {})).json.episode_id as string;
    // 16 characters = 4 tokens a message: the third reaches 12 >= 10. The environment
    // declares no history, so a budget that read the transcript would end the step with env_error.
    const replies = [];
    for (let turn = 0; turn < 3; turn++) replies.push((await call("POST", `/v1/episodes/${id}/step`, { turn, message: { role: "assistant", content: "x".repeat(16) } })).json);
    expect(replies.map((r) => [r.done, r.stop_reason])).toEqual([
      [false, null],
      [false, null],
      [true, "completion_budget"],
    ]);
    const fork = (await call("POST", `/v1/episodes/${id}/fork`, { turn: 2 })).json.episodes[0].episode_id as string;
    const onFork = await call("POST", `/v1/episodes/${fork}/step`, { turn: 2, message: { role: "assistant", content: "x".repeat(16) } });
    expect([onFork.json.done, onFork.json.stop_reason]).toEqual([true, "completion_budget"]);
  });

  it("keeps a member's budget, and a member's history flag, inside an environment group", async () => {
    const { call } = setup([envGroup({ id: "group", envs: [budgeted, recaller("recall", true)] })]);
    const byEnv = async (index: number) => (await call("POST", "/v1/envs/group/episodes", { index })).json.episode_id as string;
    const budget = await byEnv(0);
    const steps = [];
    for (let turn = 0; turn < 3; turn++) steps.push((await call("POST", `/v1/episodes/${budget}/step`, { turn, message: { role: "assistant", content: "x".repeat(16) } })).json.stop_reason);
    expect(steps).toEqual([null, null, "completion_budget"]);
    const recall = await byEnv(1);
    expect((await call("POST", `/v1/episodes/${recall}/step`, { turn: 0, message: { role: "assistant", content: "one" } })).json.messages[0].content).toBe("seen 1, last: count");
  });

  it("sums the tally from the transcript once for an episode stored without one, then keeps it", async () => {
    const { call, store } = setup([budgeted]);
    const id = (await call("POST", "/v1/envs/budgeted/episodes", {})).json.episode_id as string;
    for (let turn = 0; turn < 2; turn++) await call("POST", `/v1/episodes/${id}/step`, { turn, message: { role: "assistant", content: "x".repeat(16) } });
    const db = (store as unknown as { db: { $client: { prepare(s: string): { run(...a: unknown[]): unknown } } } }).db;
    // As migration 0004 leaves an episode of the release before it: no tallies.
    db.$client.prepare("UPDATE episodes SET stop_tallies = NULL WHERE id = ?").run(id);
    const third = await call("POST", `/v1/episodes/${id}/step`, { turn: 2, message: { role: "assistant", content: "x".repeat(16) } });
    expect([third.json.done, third.json.stop_reason]).toEqual([true, "completion_budget"]);
    expect((await store.getForStep(id))?.stopTallies).toEqual(expect.arrayContaining([12]));
  });
});
