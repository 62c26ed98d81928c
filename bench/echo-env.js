// The environment the step benchmark drives: twenty turns, each answered with a short
// feedback message, so the figures measure the server (load, run, persist), not a
// game's logic. Loaded with `edgegym serve --env`, like a user's own package.
import { defineRubric, multiTurnEnv, proceduralDataset } from "../dist/envs/index.js";
import { z } from "zod";

export const benchEcho = multiTurnEnv({
  id: "bench-echo",
  version: "1.0.0",
  description: "Twenty turns of short feedback; for load tests.",
  maxTurns: 20,
  stateSchema: z.object({ words: z.number() }),
  dataset: proceduralDataset((rng) => ({ prompt: `Write ${rng.int(2, 9)} words per turn.` })),
  setup: () => ({ state: { words: 0 } }),
  respond: (state, message, ctx) => {
    const words = String(message.content ?? "").split(/\s+/).filter(Boolean).length;
    return { state: { words: state.words + words }, messages: [{ role: "user", content: `turn ${ctx.turn}: ${words} words` }] };
  },
  rubric: defineRubric([{ name: "words", weight: 1, fn: ({ state }) => (state ? state.words : 0) }]),
});
