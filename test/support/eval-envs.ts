import { z } from "zod";
import { contentText, type ChatMessage } from "../../src/protocol/index.js";
import { defineRubric, defineTool, multiTurnEnv, proceduralDataset, rowsDataset, toolEnv } from "../../src/envs/index.js";
import { lastUserText, type ScriptedPolicy, type ScriptedRequest } from "./scripted-model.js";

/**
 * Environments defined for the evaluator's tests with the framework in src/envs: a
 * multi-turn game and a tool environment, so the full loop (model turn → environment
 * reply or tool results → model turn …) is exercised without waiting for the built-in
 * ones other branches add.
 */

/** Guess a number in [1, 100]; the environment answers "higher" / "lower" until it is found. */
export const guessNumber = multiTurnEnv<Record<string, never>, { secret: number; guesses: number; solved: boolean }>({
  id: "guess-number",
  version: "1.0.0",
  description: "Find a secret number in [1, 100] from higher/lower hints.",
  systemPrompt: "I picked a whole number from 1 to 100. Guess it: reply with <answer>N</answer>. I will say higher or lower.",
  dataset: proceduralDataset((rng) => ({ prompt: "Your first guess?", info: { secret: rng.int(1, 100) } })),
  stateSchema: z.object({ secret: z.number(), guesses: z.number(), solved: z.boolean() }),
  setup: (row) => ({ state: { secret: row.info?.secret as number, guesses: 0, solved: false } }),
  maxTurns: 10,
  respond: (state, message) => {
    const guess = Number(/<answer>\s*(-?\d+)\s*<\/answer>/.exec(contentText(message.content))?.[1]);
    const next = { ...state, guesses: state.guesses + 1 };
    if (guess === state.secret) return { state: { ...next, solved: true }, done: true, stopReason: "guessed", messages: [{ role: "user", content: "Correct!" }] };
    const hint = !Number.isFinite(guess) ? "Write your guess as <answer>N</answer>." : guess < state.secret ? "higher" : "lower";
    return { state: next, messages: [{ role: "user", content: hint }] };
  },
  rubric: defineRubric(
    [
      { name: "solved", weight: 1, fn: ({ state }) => Number(state?.solved ?? false) },
      { name: "guesses", weight: 0, fn: ({ state }) => state?.guesses ?? 0 },
    ],
  ),
});

/** Bisects using the hints in the transcript: the game's ideal player. */
export const bisectingPlayer: ScriptedPolicy = (request) => {
  let lo = 1;
  let hi = 100;
  const msgs = request.messages;
  for (let i = 0; i < msgs.length - 1; i++) {
    const m = msgs[i] as ChatMessage;
    if (m.role !== "assistant") continue;
    const guess = Number(/<answer>(\d+)<\/answer>/.exec(contentText(m.content))?.[1]);
    const hint = contentText((msgs[i + 1] as ChatMessage).content);
    if (hint === "higher") lo = guess + 1;
    if (hint === "lower") hi = guess - 1;
  }
  return { content: `<answer>${Math.floor((lo + hi) / 2)}</answer>` };
};

/** Arithmetic with tools: the model must call multiply, then add, then answer. */
export const calculator = toolEnv<Record<string, never>, { calls: number }>({
  id: "calculator",
  version: "1.0.0",
  description: "Compute a·b + c with multiply and add tools.",
  systemPrompt: "Use the tools to compute the result, then answer with <answer>N</answer>.",
  dataset: rowsDataset({
    train: [
      { prompt: "What is 17 * 23 + 4?", answer: "395" },
      { prompt: "What is 6 * 7 + 0?", answer: "42" },
      { prompt: "What is 12 * 12 + 1?", answer: "145" },
    ],
  }),
  stateSchema: z.object({ calls: z.number() }),
  setup: () => ({ state: { calls: 0 } }),
  tools: [
    defineTool({
      name: "multiply",
      description: "Multiplies a by b.",
      parameters: z.object({ a: z.number(), b: z.number() }),
      run: ({ a, b }, ctx) => {
        ctx.state.calls++;
        return String(a * b);
      },
    }),
    defineTool({
      name: "add",
      description: "Adds a and b.",
      parameters: z.object({ a: z.number(), b: z.number() }),
      run: ({ a, b }, ctx) => {
        ctx.state.calls++;
        return String(a + b);
      },
    }),
  ],
  maxTurns: 5,
  rubric: defineRubric([
    { name: "correct", weight: 1, fn: ({ completion, answer, parser }) => Number(parser.parseAnswer(completion) === answer) },
    { name: "tool_use", weight: 0, fn: ({ state }) => state?.calls ?? 0 },
  ]),
});

/** Uses the calculator's tools the way a capable model would. */
export const toolUsingModel: ScriptedPolicy = (request: ScriptedRequest) => {
  const [a, b, c] = (/(\d+) \* (\d+) \+ (\d+)/.exec(lastUserText(request)) ?? []).slice(1).map(Number) as [number, number, number];
  const results = request.messages.filter((m) => m.role === "tool").map((m) => contentText(m.content));
  const n = request.messages.filter((m) => m.role === "assistant").length;
  if (results.length === 0) return { tool_calls: [{ id: `call_${n}_m`, type: "function", function: { name: "multiply", arguments: JSON.stringify({ a, b }) } }] };
  if (results.length === 1) return { tool_calls: [{ id: `call_${n}_a`, type: "function", function: { name: "add", arguments: JSON.stringify({ a: Number(results[0]), b: c }) } }] };
  return { content: `<answer>${results.at(-1)}</answer>` };
};
