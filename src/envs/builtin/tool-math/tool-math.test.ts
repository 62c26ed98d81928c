import { describe, expect, it } from "vitest";
import { contentText } from "../../../protocol/index.js";
import { scoreEpisode, startEpisode, stepEpisode } from "../../engine.js";
import { mathEqual } from "../../math/equivalence.js";
import { createRng } from "../../rng.js";
import { calculate } from "./calculator.js";
import { toolMath } from "./index.js";
import { generateToolMathProblem, TOOL_MATH_FAMILIES } from "./problems.js";

const call = (id: string, expression: string) => ({ id, type: "function" as const, function: { name: "calculator", arguments: JSON.stringify({ expression }) } });
const say = (content: string) => ({ role: "assistant" as const, content });
const SUM = "(4682 + 4613 + 6417 + 3065 + 1802 + 1707 + 4860 + 9853) / 8";

describe("calculator", () => {
  it("evaluates arithmetic, functions and constants", () => {
    expect(calculate("4,837 * 236")).toBe("1141532");
    expect(calculate("0.1 + 0.2")).toBe("0.3");
    expect(calculate("round(6800 * 1.078^4, 2)")).toBe("9182.99");
    expect(calculate("(12 + 7) × 3 − 15 ÷ 6")).toBe("54.5");
    expect(calculate("sqrt(2)")).toBe("1.4142135623731");
    expect(calculate("hypot(3, 4) + 12! / 11!")).toBe("17");
    expect(calculate("2pi")).toBe("6.28318530717959");
  });

  it("refuses everything but arithmetic", () => {
    const refused: [string, RegExp][] = [
      ["x = 3", /assignment expressions are not supported/],
      ["f(x) = x", /function assignment/],
      ['import({}, {})', /function "import" is not available/],
      ['evaluate("1+1")', /function "evaluate" is not available/],
      ["[1, 2]", /array/],
      ['"text"', /only numbers/],
      ["5 cm", /unknown name "cm"/],
      ["3 > 2", /operator ">"/],
      ["sqrt(-1)", /not a real number/],
      ["10^400", /infinite/],
      ["1 +", /cannot parse/],
      ["", /empty/],
      ["1+".repeat(300) + "1", /longer than 500/],
    ];
    for (const [expr, message] of refused) expect(() => calculate(expr), expr).toThrow(message);
  });
});

describe("tool-math problems", () => {
  it("have answers the calculator confirms from the question's own numbers", () => {
    const nums = (q: string) => (q.match(/\d[\d,]*(\.\d+)?/g) ?? []).map((s) => s.replace(/,/g, ""));
    for (let seed = 0; seed < 120; seed++) {
      for (const difficulty of ["easy", "hard"] as const) {
        const family = TOOL_MATH_FAMILIES[seed % TOOL_MATH_FAMILIES.length]!;
        const p = generateToolMathProblem(createRng(seed, 1), { difficulty, families: [family] });
        const n = nums(p.question);
        const expr = {
          long_arithmetic: () => `(${n[0]} * ${n[1]} - ${n[2]}) / ${n[3]}`,
          compound_interest: () => `round(${n[0]} * (1 + ${n[1]} / 100)^${n[2]}, 2)`,
          mean: () => `(${n.slice(1).join(" + ")}) / ${n[0]}`,
          percent_of: () => `${n[0]} * ${n[1]} / 100`,
          square_root: () => `sqrt(${n[0]})`,
          hypotenuse: () => `hypot(${n[0]}, ${n[1]})`,
        }[family]();
        expect(mathEqual(calculate(expr), p.answer), `${p.question} → ${p.answer} vs ${expr}`).toBe(true);
      }
    }
  });
});

describe("tool-math environment", () => {
  it("opens seed 11 with its problem and publishes the calculator", async () => {
    const s = await startEpisode(toolMath, { seed: 11 });
    expect(s.messages.at(-1)).toEqual({
      role: "user",
      content: "The daily visitor counts of a museum over 8 days were 4,682, 4,613, 6,417, 3,065, 1,802, 1,707, 4,860, 9,853. What was the mean number of visitors per day? Give the exact value.",
    });
    expect(toolMath.toolDefinitions()[0]?.function).toMatchObject({ name: "calculator", parameters: { required: ["expression"] } });
  });

  it("scores a winning episode: a calculator call, then the answer", async () => {
    const start = await startEpisode(toolMath, { seed: 11 });
    const one = await stepEpisode(toolMath, start, { role: "assistant", content: null, tool_calls: [call("c1", SUM)] });
    expect(one.reply).toEqual([{ role: "tool", tool_call_id: "c1", content: "4624.875" }]);
    expect(one.snapshot.done).toBe(false);
    const two = await stepEpisode(toolMath, one.snapshot, say("<answer>4624.875</answer>"));
    expect([two.snapshot.done, two.snapshot.stopReason]).toEqual([true, "no_tool_calls"]);
    const score = await scoreEpisode(toolMath, two.snapshot);
    expect(score.components).toEqual([
      { name: "correct", weight: 1, score: 1 },
      { name: "format", weight: 0.1, score: 1 },
    ]);
    expect(score.reward).toBeCloseTo(1.1, 12);
    expect(score.metrics).toEqual({ calculator_calls: 1, tool_errors: 0, used_tool: 1, turns: 2, tool_calls: 1 });
  });

  it("scores a losing episode: a failed call, then a wrong answer", async () => {
    const start = await startEpisode(toolMath, { seed: 11 });
    const one = await stepEpisode(toolMath, start, { role: "assistant", content: "Let me add.", tool_calls: [call("c1", "sum(4682, 4613)"), call("c2", "4682 + 4613")] });
    expect(one.reply.map((m) => contentText(m.content))).toEqual(['Error: function "sum" is not available', "9295"]);
    const two = await stepEpisode(toolMath, one.snapshot, say("<answer>4625</answer>"));
    const score = await scoreEpisode(toolMath, two.snapshot);
    expect(score.components.map((c) => c.score)).toEqual([0, 1]);
    expect(score.reward).toBeCloseTo(0.1, 12);
    expect(score.metrics).toMatchObject({ calculator_calls: 2, tool_errors: 1, tool_calls: 2 });
  });

  it("scores a malformed episode: no tags, no tool", async () => {
    const start = await startEpisode(toolMath, { seed: 11 });
    const one = await stepEpisode(toolMath, start, say("It is about 4625 visitors."));
    expect(one.snapshot.stopReason).toBe("no_tool_calls");
    const score = await scoreEpisode(toolMath, one.snapshot);
    expect(score.reward).toBe(0);
    expect(score.metrics).toMatchObject({ calculator_calls: 0, used_tool: 0 });
  });

  it("turns bad tool arguments into an error message, not a failed step", async () => {
    const start = await startEpisode(toolMath, { seed: 11 });
    const bad = { id: "c1", type: "function" as const, function: { name: "calculator", arguments: '{"expr": "1+1"}' } };
    const one = await stepEpisode(toolMath, start, { role: "assistant", content: null, tool_calls: [bad] });
    expect(contentText(one.reply[0]?.content)).toMatch(/^Error: invalid arguments/);
    expect(one.snapshot.error).toBeNull();
  });
});
