// Environments the Python tests serve with `edgegym serve --env <this file>`: real
// environments built with the package's own helpers (dist/envs), run by the real server.
// The fixture writes this file next to a node_modules link and replaces __DIST__.
import { z } from "zod";
import { defineRubric, defineTool, multiTurnEnv, proceduralDataset, singleTurnEnv, toolEnv } from "__DIST__/envs/index.js";
import { contentText } from "__DIST__/protocol/index.js";

const lastAssistantText = (completion) => {
  const msgs = completion.filter((m) => m.role === "assistant");
  return msgs.length ? contentText(msgs[msgs.length - 1].content) : "";
};

/** Trivially learnable: the reward is 1 when the answer starts with the letter A. */
export const letterA = singleTurnEnv({
  id: "letter-a",
  version: "1.0.0",
  description: "Answer with one letter; the reward is 1 for A.",
  dataset: proceduralDataset((rng) => ({ prompt: `Pick one letter: A, B, C or D. (${rng.int(0, 9)})`, answer: "A" })),
  rubric: defineRubric([
    { name: "is_a", weight: 1, fn: ({ completion }) => (lastAssistantText(completion).trim().startsWith("A") ? 1 : 0) },
  ]),
});

/** Multi-turn: guess a number from 1 to 9 with higher/lower feedback, three turns at most. */
export const guessNumber = multiTurnEnv({
  id: "guess-number",
  version: "1.0.0",
  description: "Guess a number from 1 to 9; the environment says higher or lower.",
  systemPrompt: "Guess the secret number from 1 to 9. Answer with the number only.",
  maxTurns: 3,
  stateSchema: z.object({ secret: z.number().int(), guesses: z.number().int(), solved: z.boolean() }).strict(),
  dataset: proceduralDataset((rng) => ({ prompt: "Your first guess?", answer: String(rng.int(1, 9)) })),
  setup: (row) => ({ state: { secret: Number(row.answer), guesses: 0, solved: false } }),
  respond: (state, message) => {
    const guess = Number.parseInt(contentText(message.content).trim(), 10);
    const next = { ...state, guesses: state.guesses + 1 };
    if (!Number.isFinite(guess)) return { state: next, messages: [{ role: "user", content: "That is not a number. Guess again." }] };
    if (guess === state.secret) return { state: { ...next, solved: true }, messages: [{ role: "user", content: "Correct!" }], done: true, stopReason: "solved" };
    return { state: next, messages: [{ role: "user", content: guess < state.secret ? "Higher." : "Lower." }] };
  },
  rubric: defineRubric([
    { name: "solved", weight: 1, fn: ({ state }) => (state?.solved ? 1 : 0) },
    { name: "guesses", weight: 0, fn: ({ state }) => state?.guesses ?? 0 },
  ]),
});

/** Tool use: add two numbers with the `add` tool, then answer. The tool counts its calls in state. */
export const calculator = toolEnv({
  id: "calculator",
  version: "1.0.0",
  description: "Add two numbers with the add tool, then give the sum.",
  systemPrompt: "Use the add tool, then answer with the sum.",
  maxTurns: 3,
  stateSchema: z.object({ calls: z.number().int() }).strict(),
  dataset: proceduralDataset((rng) => {
    const a = rng.int(1, 9);
    const b = rng.int(1, 9);
    return { prompt: `What is ${a} + ${b}?`, answer: String(a + b), info: { a, b } };
  }),
  setup: () => ({ state: { calls: 0 } }),
  tools: [
    defineTool({
      name: "add",
      description: "Add two integers.",
      parameters: z.object({ a: z.number().int(), b: z.number().int() }),
      run: ({ a, b }, { state }) => {
        state.calls += 1;
        return String(a + b);
      },
    }),
  ],
  rubric: defineRubric([
    { name: "correct", weight: 1, fn: ({ completion, answer }) => (lastAssistantText(completion).includes(answer ?? "?") ? 1 : 0) },
    { name: "tool_calls", weight: 0, fn: ({ state }) => state?.calls ?? 0 },
  ]),
});
