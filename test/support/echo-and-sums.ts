import { z } from "zod";
import { defineRubric, defineTool, rowsDataset, singleTurnEnv, toolEnv, XmlParser } from "../../src/envs/index.js";
import type { AssistantMessage } from "../../src/protocol/index.js";

/*
 * Two small environments that differ in every per-episode field, for the tests of
 * environment groups and of the drivers: `echo` has no tools and one turn (and an
 * argument), `sums` a tool and three turns (and state). A group's union of them is right
 * for neither member, which is what those tests look for.
 */

export const echo = singleTurnEnv<{ shout: boolean }>({
  id: "echo",
  version: "1.0.0",
  description: "Repeat the word.",
  systemPrompt: "Repeat the word inside <answer> tags.",
  parser: new XmlParser({ fields: ["answer"] }),
  argsSchema: z.object({ shout: z.boolean().default(false) }).strict(),
  dataset: rowsDataset({ train: ["alpha", "beta", "gamma"].map((w) => ({ prompt: w, answer: w, info: { word: w } })), eval: [{ prompt: "delta", answer: "delta" }] }),
  rubric: defineRubric([
    { name: "exact", weight: 1, fn: ({ completion, answer, parser, args }) => Number(parser.parseAnswer(completion) === ((args as { shout: boolean }).shout ? answer?.toUpperCase() : answer)) },
  ]),
});

const add = defineTool<{ calls: number }, z.ZodObject<{ a: z.ZodNumber; b: z.ZodNumber }>>({
  name: "add",
  description: "Adds two numbers.",
  parameters: z.object({ a: z.number(), b: z.number() }).strict(),
  run: ({ a, b }, { state }) => {
    state.calls++;
    return String(a + b);
  },
});

export const sums = toolEnv<Record<string, never>, { calls: number }>({
  id: "sums",
  version: "2.0.0",
  description: "Add with the tool.",
  systemPrompt: "Use the add tool, then answer with the number.",
  dataset: rowsDataset({ train: [{ prompt: "2+3", answer: "5" }, { prompt: "4+4", answer: "8" }] }),
  stateSchema: z.object({ calls: z.number() }).strict(),
  setup: () => ({ state: { calls: 0 } }),
  tools: [add],
  maxTurns: 3,
  rubric: defineRubric([
    { name: "correct", weight: 1, fn: ({ completion, answer, parser }) => Number(parser.parseAnswer(completion) === answer) },
    { name: "used_tool", weight: 0.5, fn: ({ state }) => Number((state?.calls ?? 0) > 0) },
  ]),
});

/** The assistant's call of `sums`' add tool. */
export const addCall = (a: number, b: number): AssistantMessage => ({ role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "add", arguments: JSON.stringify({ a, b }) } }] });
