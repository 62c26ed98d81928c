// The environment `npm run bench:long` drives: up to 1,000 turns, each answered with a
// 4 KB observation (a tool's output, say), so what grows is the transcript, not the
// environment's work. Loaded with `edgegym serve --env` on Node and bundled into the
// bench Worker (bench/long/worker.ts).
import { defineRubric, multiTurnEnv, proceduralDataset } from "../../dist/envs/index.js";
import { z } from "zod";

const LINE = "0123456789abcdef".repeat(4) + "\n"; // 65 bytes
const OBSERVATION = LINE.repeat(63); // 4,095 bytes

export const benchLong = multiTurnEnv({
  id: "bench-long",
  version: "1.0.0",
  description: "1,000 turns of 4 KB observations; for the long-horizon benchmark.",
  maxTurns: 1000,
  stateSchema: z.object({ chars: z.number() }),
  dataset: proceduralDataset((rng) => ({ prompt: `Explore for as long as it takes (task ${rng.int(0, 999)}).` })),
  setup: () => ({ state: { chars: 0 } }),
  respond: (state, message, ctx) => ({
    state: { chars: state.chars + String(message.content ?? "").length },
    messages: [{ role: "user", content: `turn ${ctx.turn}\n${OBSERVATION}` }],
  }),
  rubric: defineRubric([{ name: "chars", weight: 1, fn: ({ state }) => (state ? state.chars : 0) }]),
});
