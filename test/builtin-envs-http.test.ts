import { afterEach, describe, expect, it } from "vitest";
import { builtinEnvs } from "../src/envs/index.js";
import { optimalMoves } from "../src/envs/builtin/tic-tac-toe/opponent.js";
import type { Board, Mark } from "../src/envs/builtin/tic-tac-toe/board.js";
import { inProcessApp } from "./support/in-process.js";

/**
 * One full episode of every built-in environment through the HTTP app (in-process, on
 * an in-memory SQLite store): reset, steps, score, exactly as a trainer drives them.
 */
const apps: ReturnType<typeof inProcessApp>[] = [];
function app(runtime: "node" | "worker" = "node") {
  const a = inProcessApp({ runtime });
  apps.push(a);
  return a;
}
afterEach(() => {
  while (apps.length) apps.pop()?.close();
});

type Call = ReturnType<typeof inProcessApp>["call"];
type Message = { role: string; content: string | null; tool_call_id?: string };

const say = (content: string) => ({ role: "assistant", content });

async function reset(call: Call, env: string, body: Record<string, unknown>) {
  const res = await call("POST", `/v1/envs/${env}/episodes`, body);
  expect(res.status, res.text).toBe(201);
  return res.json as { episode_id: string; messages: Message[]; tools: unknown[]; index: number };
}

async function step(call: Call, id: string, turn: number, message: Record<string, unknown>) {
  const res = await call("POST", `/v1/episodes/${id}/step`, { turn, message });
  expect(res.status, res.text).toBe(200);
  return res.json as { turn: number; done: boolean; stop_reason: string | null; messages: Message[] };
}

async function score(call: Call, id: string) {
  const res = await call("POST", `/v1/episodes/${id}/score`);
  expect(res.status, res.text).toBe(200);
  return res.json.score as { reward: number; components: { name: string; score: number }[]; metrics: Record<string, number> };
}

/** The reference answer of a procedural task with default args, read through the examples route. */
async function referenceAnswer(call: Call, env: string, index: number): Promise<string> {
  const res = await call("GET", `/v1/envs/${env}/examples?split=train&offset=${index}&limit=1`);
  return res.json.examples[0].answer as string;
}

/** Reads the text grid the tic-tac-toe environment shows back into a board. */
function readBoard(text: string): Board {
  const rows = text.split("\n").filter((l) => /^ .( \| .){2}$/.test(l));
  const cells = rows.slice(-3).flatMap((l) => l.split("|").map((c) => c.trim()));
  return cells.map((c) => (c === "X" || c === "O" ? c : null));
}

describe("every built-in environment over HTTP", () => {
  // judge-qa (needs a judge endpoint) and the Node-only python environment play their full
  // HTTP episodes in their own tests, beside them in src/envs/builtin/.
  it("lists every built-in on both runtimes", async () => {
    for (const runtime of ["node", "worker"] as const) {
      const { call } = app(runtime);
      const ids = (await call("GET", "/v1/envs")).json.envs.map((e: { id: string }) => e.id);
      expect(ids).toEqual(builtinEnvs.map((e) => e.id).sort());
      expect(ids).toEqual(expect.arrayContaining(["double-check", "judge-qa", "math", "reasoning", "reverse-text", "tic-tac-toe", "tic-tac-toe-2p", "tool-math", "wordle"]));
    }
    expect(builtinEnvs.every((e) => e.runtimes.includes("worker") && e.runtimes.includes("node"))).toBe(true);
  });

  it("reverse-text", async () => {
    const { call } = app();
    const ep = await reset(call, "reverse-text", { index: 0 });
    const text = ep.messages.at(-1)?.content as string;
    const done = await step(call, ep.episode_id, 0, say(`<answer>${Array.from(text).reverse().join("")}</answer>`));
    expect(done.done).toBe(true);
    expect((await score(call, ep.episode_id)).reward).toBeCloseTo(1.2, 10);
  });

  it("math", async () => {
    const { call } = app();
    const ep = await reset(call, "math", { seed: 7 });
    expect(ep.messages.at(-1)?.content).toBe("Compute 19 × (9 - 15).");
    const answer = await referenceAnswer(call, "math", ep.index);
    const done = await step(call, ep.episode_id, 0, say(`<answer>\\boxed{${answer}}</answer>`));
    expect([done.done, done.stop_reason]).toEqual([true, "single_turn"]);
    expect((await score(call, ep.episode_id)).reward).toBeCloseTo(1.1, 10);
  });

  it("double-check", async () => {
    const { call } = app();
    const ep = await reset(call, "double-check", { seed: 3 });
    const first = await step(call, ep.episode_id, 0, say("<answer>7</answer>"));
    expect(first.messages).toEqual([{ role: "user", content: "Are you sure?" }]);
    const second = await step(call, ep.episode_id, 1, say("<answer>7</answer>"));
    expect([second.done, second.stop_reason]).toEqual([true, "final_answer"]);
    const s = await score(call, ep.episode_id);
    expect(s.reward).toBeCloseTo(1.1, 10);
    expect(s.metrics).toMatchObject({ first_correct: 1, changed_answer: 0 });
  });

  it("tic-tac-toe, played to a win against the random opponent", async () => {
    const { call } = app();
    const ep = await reset(call, "tic-tac-toe", { seed: 2, args: { opponent: "random" } });
    const mark = /You play ([XO])/.exec(ep.messages.at(-1)?.content as string)?.[1] as Mark;
    let board = readBoard(ep.messages.at(-1)?.content as string);
    let turn = 0;
    let last;
    do {
      const cell = (optimalMoves(board, mark)[0] as number) + 1;
      last = await step(call, ep.episode_id, turn++, say(`<move>${cell}</move>`));
      board = readBoard(last.messages.at(-1)?.content as string);
    } while (!last.done);
    expect(last.stop_reason).toBe("game_over");
    expect(last.messages.at(-1)?.content).toMatch(/You win!$/);
    const s = await score(call, ep.episode_id);
    expect(s.reward).toBeCloseTo(1.1, 10);
    expect(s.metrics).toMatchObject({ win: 1 });
  });

  it("wordle", async () => {
    const { call } = app();
    const ep = await reset(call, "wordle", { seed: 4 });
    const one = await step(call, ep.episode_id, 0, say("<guess>crane</guess>"));
    expect(one.messages[0]?.content).toBe("Guess 1/6: C R A N E\nFeedback:  - Y G - Y\nGuesses left: 5.");
    const two = await step(call, ep.episode_id, 1, say("<guess>heart</guess>"));
    expect([two.done, two.stop_reason]).toEqual([true, "solved"]);
    expect((await score(call, ep.episode_id)).reward).toBeCloseTo(1 + 0.5 * (5 / 6) + 0.2 + 0.1, 10);
  });

  it("tool-math, with a calculator call executed by the step", async () => {
    const { call } = app();
    const ep = await reset(call, "tool-math", { seed: 11 });
    expect(ep.tools).toHaveLength(1);
    const expression = "(4682 + 4613 + 6417 + 3065 + 1802 + 1707 + 4860 + 9853) / 8";
    const toolStep = await step(call, ep.episode_id, 0, {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call_1", type: "function", function: { name: "calculator", arguments: JSON.stringify({ expression }) } }],
    });
    expect(toolStep.done).toBe(false);
    expect(toolStep.messages).toEqual([{ role: "tool", tool_call_id: "call_1", content: "4624.875" }]);
    const final = await step(call, ep.episode_id, 1, say(`<answer>${toolStep.messages[0]?.content}</answer>`));
    expect([final.done, final.stop_reason]).toEqual([true, "no_tool_calls"]);
    const s = await score(call, ep.episode_id);
    expect(s.reward).toBeCloseTo(1.1, 10);
    expect(s.metrics).toMatchObject({ calculator_calls: 1, tool_calls: 1, tool_errors: 0 });
  });

  it("reasoning (countdown)", async () => {
    const { call } = app();
    const ep = await reset(call, "reasoning", { seed: 12, args: { family: "countdown", difficulty: "medium" } });
    expect(ep.messages.at(-1)?.content).toContain("equal to 46");
    const done = await step(call, ep.episode_id, 0, say("<answer>50 - (6 + 7) + 9</answer>"));
    expect(done.done).toBe(true);
    expect((await score(call, ep.episode_id)).reward).toBeCloseTo(1.1, 10);
  });
});
