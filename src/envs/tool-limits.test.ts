import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { ToolCall } from "../protocol/index.js";
import { rowsDataset } from "./dataset.js";
import { toolEnv } from "./define.js";
import { startEpisode, stepEpisode } from "./engine.js";
import { defineRubric } from "./rubric.js";
import { hangingTool } from "../../test/support/hanging-tool.js";
import { DEFAULT_MAX_TOOL_CALLS_PER_MESSAGE, defineTool, executeToolCalls } from "./tools.js";

const calls = (n: number): ToolCall[] =>
  Array.from({ length: n }, (_, i) => ({ id: `c${i}`, type: "function" as const, function: { name: "count", arguments: "{}" } }));

function counter() {
  let runs = 0;
  const tool = defineTool<unknown, z.ZodObject>({
    name: "count",
    description: "Counts its runs.",
    parameters: z.object({}).strict(),
    run: () => String(++runs),
  });
  return { tool, runs: () => runs };
}

describe("tool calls per message", () => {
  it("runs at most the cap and answers every call past it without running it", async () => {
    const { tool, runs } = counter();
    // The attack from issue 18: 1,000 calls in one message.
    const out = await executeToolCalls([tool], calls(1_000), {});
    expect(runs()).toBe(DEFAULT_MAX_TOOL_CALLS_PER_MESSAGE);
    expect(out.messages).toHaveLength(1_000);
    expect(out.messages.map((m) => m.role === "tool" && m.tool_call_id)).toEqual(calls(1_000).map((c) => c.id));
    expect(out.messages[15]?.content).toBe("16");
    expect(out.messages[16]?.content).toBe("Error: not run: at most 16 tool calls are run per message; make the remaining calls in a later message.");
    expect(out.errors).toBe(1_000 - DEFAULT_MAX_TOOL_CALLS_PER_MESSAGE);
  });

  it("takes the environment's own cap, validated at definition", async () => {
    const { tool, runs } = counter();
    const env = toolEnv({
      id: "capped",
      version: "1",
      description: "d",
      dataset: rowsDataset({ train: [{ prompt: "go" }] }),
      tools: [tool],
      maxToolCallsPerMessage: 2,
      rubric: defineRubric([{ name: "r", weight: 1, fn: () => 1 }]),
    });
    const step = await stepEpisode(env, await startEpisode(env, { index: 0 }), { role: "assistant", content: null, tool_calls: calls(5) });
    expect(runs()).toBe(2);
    expect(step.reply.map((m) => m.content)).toEqual(["1", "2", ...Array(3).fill(expect.stringMatching(/^Error: not run: at most 2 /))]);
    const bad = { id: "x", version: "1", description: "d", dataset: rowsDataset({ train: [{ prompt: "go" }] }), tools: [tool], rubric: defineRubric([]) };
    expect(() => toolEnv({ ...bad, maxToolCallsPerMessage: 0 })).toThrow(/maxToolCallsPerMessage must be an integer from 1 to 256/);
    expect(() => toolEnv({ ...bad, maxToolCallsPerMessage: 10_000 })).toThrow(/from 1 to 256/);
  });
});

describe("a step whose client went away", () => {
  it("aborts the running tool and fails with the abort reason, storing nothing", async () => {
    const { tool: hang, events, started } = hangingTool();
    const env = toolEnv({ id: "hangs", version: "1", description: "d", dataset: rowsDataset({ train: [{ prompt: "go" }] }), tools: [hang], rubric: defineRubric([]) });
    const snap = await startEpisode(env, { index: 0 });
    const client = new AbortController();
    const step = stepEpisode(env, snap, { role: "assistant", content: null, tool_calls: [{ id: "h", type: "function", function: { name: "hang", arguments: "{}" } }] }, { signal: client.signal });
    await started;
    client.abort(new Error("client gone"));
    await expect(step).rejects.toThrow("client gone");
    expect(events).toEqual(["started", "aborted"]);
    expect(snap.turn).toBe(0);
  });

  it("does not start tools once the signal has aborted", async () => {
    const { tool, runs } = counter();
    const gone = AbortSignal.abort(new Error("gone before"));
    await expect(executeToolCalls([tool], calls(3), {}, { signal: gone })).rejects.toThrow("gone before");
    expect(runs()).toBe(0);
  });
});
