import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { AssistantMessage } from "../protocol/index.js";
import { rowsDataset } from "./dataset.js";
import { multiTurnEnv, toolEnv } from "./define.js";
import { startEpisode, stepEpisode, type EpisodeSnapshot } from "./engine.js";
import { defineRubric } from "./rubric.js";
import { approxTokens, completionBudget, errorStop, messageText, promptBudget } from "./stop-budgets.js";
import { defineTool } from "./tools.js";
import type { AnyEnvironment, StopCondition } from "./types.js";

const dataset = rowsDataset({ train: [{ prompt: "go" }] });
const rubric = defineRubric<{ error?: string }>([{ name: "none", weight: 0, fn: () => 0 }]);

function echoEnv(stopConditions: StopCondition<{ error?: string }>[], replyText = "ok") {
  return multiTurnEnv<Record<string, never>, { error?: string }>({
    id: "echo",
    version: "1",
    description: "echo",
    dataset,
    rubric,
    maxTurns: 4,
    stateSchema: z.object({ error: z.string().optional() }).strict(),
    stopConditions,
    respond: (state, message) => ({
      state: String(message.content).includes("BREAK") ? { error: "the board is corrupt" } : state,
      messages: [{ role: "user", content: replyText }],
    }),
  });
}

async function run(env: AnyEnvironment, contents: string[]): Promise<EpisodeSnapshot> {
  let snap = await startEpisode(env, { index: 0, seed: 1 });
  for (const content of contents) {
    if (snap.done) break;
    snap = (await stepEpisode(env, snap, { role: "assistant", content })).snapshot;
  }
  return snap;
}

describe("approxTokens", () => {
  it("is characters / 4 rounded up, counting tool calls and reasoning", () => {
    expect(approxTokens("")).toBe(0);
    expect(approxTokens("abcde")).toBe(2);
    const message: AssistantMessage = { role: "assistant", content: "ab", reasoning_content: "cd", tool_calls: [{ id: "1", type: "function", function: { name: "f", arguments: "{}" } }] };
    expect(messageText(message)).toBe("abcdf{}");
  });
});

describe("completionBudget", () => {
  it("stops, truncated, once the assistant messages reach the budget", async () => {
    const snap = await run(echoEnv([completionBudget({ maxTokens: 10 })]), ["x".repeat(20), "y".repeat(20), "z".repeat(20)]);
    expect(snap).toMatchObject({ turn: 2, done: true, stopReason: "completion_budget", truncated: true });
  });

  it("uses a given token count instead of the estimate", async () => {
    const words = (t: string) => t.split(/\s+/).filter(Boolean).length;
    const snap = await run(echoEnv([completionBudget({ maxTokens: 3, countTokens: words })]), ["one two", "three", "four"]);
    expect(snap).toMatchObject({ turn: 2, stopReason: "completion_budget" });
  });

  it("fires before max_turns when both would (author conditions come first)", async () => {
    const snap = await run(echoEnv([completionBudget({ maxTokens: 4 })]), ["a", "b", "c", "d".repeat(16)]);
    expect(snap).toMatchObject({ turn: 4, stopReason: "completion_budget" });
    const plain = await run(echoEnv([completionBudget({ maxTokens: 100 })]), ["a", "b", "c", "d"]);
    expect(plain).toMatchObject({ turn: 4, stopReason: "max_turns" });
  });

  it("rejects a budget that is not a positive integer", () => {
    expect(() => completionBudget({ maxTokens: 0 })).toThrow(/positive integer/);
  });
});

describe("promptBudget", () => {
  it("stops when the next prompt (transcript + reply) is over the budget", async () => {
    // Opening "go" = 1 token; each turn adds the message (1) and a 40-character reply (10).
    const env = echoEnv([promptBudget({ maxTokens: 20 })], "r".repeat(40));
    const snap = await run(env, ["a", "b", "c"]);
    expect(snap).toMatchObject({ turn: 2, stopReason: "prompt_budget", truncated: true });
  });
});

describe("errorStop", () => {
  it("stops when the state flags an error", async () => {
    const snap = await run(echoEnv([errorStop()]), ["fine", "BREAK", "more"]);
    expect(snap).toMatchObject({ turn: 2, done: true, stopReason: "error", truncated: true, error: null });
    expect(snap.state).toEqual({ error: "the board is corrupt" });
  });

  it("stops on a failed tool call when asked to", async () => {
    const divide = defineTool<Record<string, never>, z.ZodObject<{ a: z.ZodNumber; b: z.ZodNumber }>>({
      name: "divide",
      description: "a / b",
      parameters: z.object({ a: z.number(), b: z.number() }),
      run: ({ a, b }) => {
        if (b === 0) throw new Error("division by zero");
        return String(a / b);
      },
    });
    const make = (onToolError: boolean) =>
      toolEnv({ id: "div", version: "1", description: "d", dataset, rubric: defineRubric([]), tools: [divide], stopConditions: [errorStop({ onToolError })] });
    const call = (args: string): AssistantMessage => ({ role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "divide", arguments: args } }] });
    for (const onToolError of [true, false]) {
      const env = make(onToolError);
      let snap = await startEpisode(env, { index: 0 });
      snap = (await stepEpisode(env, snap, call('{"a":1,"b":2}'))).snapshot;
      expect(snap.done).toBe(false);
      const step = await stepEpisode(env, snap, call('{"a":1,"b":0}'));
      expect(step.reply[0]).toMatchObject({ role: "tool", content: "Error: division by zero" });
      expect(step.snapshot.done).toBe(onToolError);
      if (onToolError) expect(step.snapshot.stopReason).toBe("error");
    }
  });
});
