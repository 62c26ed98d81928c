import { z } from "zod";
import { defineRubric, multiTurnEnv, rowsDataset } from "../../src/envs/index.js";

/**
 * A multi-turn environment whose state is a step count, for the fork tests: every reply
 * carries the count and a draw from the episode's seeded rng (so a fork's replay is
 * checked to be exact), and the reward is the count.
 */
export const counterEnv = multiTurnEnv({
  id: "counter",
  version: "1.0.0",
  description: "counts steps",
  dataset: rowsDataset({ train: [{ prompt: "count" }] }),
  stateSchema: z.object({ n: z.number() }),
  setup: () => ({ state: { n: 0 } }),
  respond: (state, _message, ctx) => ({ state: { n: state.n + 1 }, messages: [{ role: "user", content: `n=${state.n + 1} r=${ctx.rng.int(0, 1_000_000)}` }] }),
  rubric: defineRubric<{ n: number }>([{ name: "n", weight: 1, fn: ({ state }) => state?.n ?? 0 }]),
  maxTurns: 200,
});
