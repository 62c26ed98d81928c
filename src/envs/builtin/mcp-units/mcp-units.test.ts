import { afterAll, describe, expect, it } from "vitest";
import { inProcessApp } from "../../../../test/support/in-process.js";
import { createRng } from "../../rng.js";
import { createMcpUnitsNodeEnv } from "./env.node.js";
import { convert, formatNumber } from "./units.js";
import { unitsTask } from "./index.js";

describe("units", () => {
  it("converts with the exact definitions, temperatures affinely, and refuses mixed quantities", () => {
    expect(convert(1, "mi", "km")).toBeCloseTo(1.609344, 12);
    expect(convert(100, "C", "F")).toBeCloseTo(212, 10);
    expect(convert(0, "K", "C")).toBeCloseTo(-273.15, 10);
    expect(formatNumber(convert(1, "gal", "l"))).toBe("3.785411784");
    expect(() => convert(1, "kg", "m")).toThrow(/cannot convert mass/);
    expect(() => convert(1, "constructor", "m")).toThrow(/unknown unit/);
  });

  it("tasks are reproducible from the seed", () => {
    expect(unitsTask(createRng(7, 0, 0))).toEqual(unitsTask(createRng(7, 0, 0)));
  });
});

describe("mcp-units: the built-in MCP example, its server a child process over stdio", () => {
  const env = createMcpUnitsNodeEnv();
  const app = inProcessApp({ envs: [env] });
  afterAll(async () => {
    await env.close();
    app.close();
  });

  it("plays an episode: the tool call goes to the MCP server, a right answer scores 1.1", async () => {
    const reset = await app.call("POST", "/v1/envs/mcp-units/episodes", { split: "eval", seed: 11 });
    expect(reset.status).toBe(201);
    expect(reset.json.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(["convert_units"]);
    const id = reset.json.episode_id as string;
    const prompt = reset.json.messages.at(-1).content as string;
    const match = /([\d.]+) (\S+) (?:to|in|is how many) (\S+?)[.?]$/.exec(prompt.replace("A reading of ", ""));
    expect(match, prompt).not.toBeNull();
    const [, value, from, to] = match as unknown as [string, string, string, string];
    const args = { value: Number(value), from: from, to: to };
    const step = await app.call("POST", `/v1/episodes/${id}/step`, {
      turn: 0,
      message: { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "convert_units", arguments: JSON.stringify(args) } }] },
    });
    const result = step.json.messages[0].content as string;
    expect(result).toBe(formatNumber(convert(args.value, args.from, args.to)));
    const wrong = await app.call("POST", `/v1/episodes/${id}/step`, {
      turn: 1,
      message: { role: "assistant", content: null, tool_calls: [{ id: "c2", type: "function", function: { name: "convert_units", arguments: JSON.stringify({ value: 1, from: "kg", to: "km" }) } }] },
    });
    expect(wrong.json.messages[0].content).toMatch(/^Error: cannot convert mass/);
    await app.call("POST", `/v1/episodes/${id}/step`, { turn: 2, message: { role: "assistant", content: `<answer>${result}</answer>` } });
    const score = await app.call("POST", `/v1/episodes/${id}/score`);
    expect(score.json.score.reward).toBeCloseTo(1.1, 10);
    expect(score.json.score.metrics).toMatchObject({ tool_calls: 2, tool_errors: 1 });
  });
});
