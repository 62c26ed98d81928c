import { describe, expect, it } from "vitest";
import { createRng } from "../../rng.js";
import { EngineError, scoreEpisode, startEpisode, stepEpisode } from "../../engine.js";
import { floatMath } from "../../math/mathjs.js";
import { Rational } from "../../math/rational.js";
import { DIFFICULTIES, generateMathTask, MATH_FAMILY_NAMES } from "./generator.js";
import { math } from "./index.js";

const say = (content: string) => ({ role: "assistant" as const, content });

async function play(content: string, seed = 7) {
  const start = await startEpisode(math, { seed });
  const { snapshot } = await stepEpisode(math, start, say(content));
  return { snapshot, score: await scoreEpisode(math, snapshot), answer: (await math.dataset.row("train", seed)).answer as string };
}

describe("math environment", () => {
  it("opens seed 7 with the system prompt and its problem", async () => {
    const s = await startEpisode(math, { seed: 7 });
    expect(s.messages).toEqual([
      {
        role: "system",
        content: "Solve the math problem. You may reason inside <think>…</think> first. Then give only the final answer inside <answer>…</answer>: an exact value (integer, fraction or decimal), without units.",
      },
      { role: "user", content: "Compute 19 × (9 - 15)." },
    ]);
    expect([s.split, s.index, s.args]).toEqual(["train", 7, { difficulty: "medium" }]);
    expect((await math.dataset.row("train", 7)).answer).toBe("-114");
  });

  it("generates from args: difficulty and families change the task, the seed fixes it", async () => {
    const args = { difficulty: "hard", families: ["fraction_arithmetic"] };
    const a = await startEpisode(math, { seed: 7, split: "eval", args });
    const b = await startEpisode(math, { seed: 7, split: "eval", args });
    expect(a.messages).toEqual(b.messages);
    expect(a.messages.at(-1)).toEqual({ role: "user", content: "Compute ((4/7) - (27/14)) × (11/8). Give the answer as a fraction in lowest terms (or an integer)." });
    expect((await math.dataset.row("eval", 7, a.args)).answer).toBe("-209/112");
    const train = await startEpisode(math, { seed: 7, split: "train", args });
    expect(train.messages.at(-1)).not.toEqual(a.messages.at(-1));
    await expect(startEpisode(math, { args: { difficulty: "extreme" } })).rejects.toBeInstanceOf(EngineError);
    await expect(startEpisode(math, { args: { families: ["calculus"] } })).rejects.toThrow(/families/);
  });

  it("scores a winning episode: correct in another form, clean format", async () => {
    const { snapshot, score } = await play("<think>19 × -6</think>\n<answer>-114.0</answer>");
    expect([snapshot.done, snapshot.stopReason, snapshot.turn]).toEqual([true, "single_turn", 1]);
    expect(score.components).toEqual([
      { name: "correct", weight: 1, score: 1 },
      { name: "format", weight: 0.1, score: 1 },
    ]);
    expect(score.reward).toBeCloseTo(1.1, 12);
    expect(score.metrics).toEqual({ answered: 1, turns: 1 });
  });

  it("scores a losing episode: wrong answer, text outside the tags", async () => {
    const { score } = await play("I think it is <answer>114</answer>");
    // correct 0; format: the answer field is present (1) but text is outside tags (× 0.8).
    expect(score.components.map((c) => c.score)).toEqual([0, 0.8]);
    expect(score.reward).toBeCloseTo(0.08, 12);
  });

  it("scores a malformed episode: no answer tags at all", async () => {
    const { score } = await play("The answer is -114.");
    expect(score.components.map((c) => c.score)).toEqual([0, 0]);
    expect(score.reward).toBe(0);
    expect(score.metrics.answered).toBe(0);
  });
});

describe("math generator", () => {
  const asExpression = (q: string) => q.replace(/^Compute /, "").replace(/\. .*$|\.$/, "").replace(/×/g, "*").replace(/÷/g, "/");

  it("gives exact answers that check out independently, for every family and difficulty", () => {
    for (const difficulty of DIFFICULTIES) {
      for (const family of MATH_FAMILY_NAMES) {
        for (let seed = 0; seed < 40; seed++) {
          const task = generateMathTask(createRng(seed, 1), { difficulty, families: [family] });
          expect(task.family).toBe(family);
          const exact = /^-?\d+(\.\d+)?$/.test(task.answer) || /^-?\d+\/\d+$/.test(task.answer);
          expect(exact, `${family} ${difficulty} answer "${task.answer}"`).toBe(true);
          const gold = task.answer.includes("/") ? Number(task.answer.split("/")[0]) / Number(task.answer.split("/")[1]) : Number(task.answer);
          if (family.endsWith("arithmetic")) {
            // Evaluate the question's own expression with mathjs, independently of the generator.
            expect(floatMath().evaluate(asExpression(task.question)), task.question).toBeCloseTo(gold, 6);
          }
          if (family === "linear_equations") {
            const eq = /Solve for x: (.*?)\.(?: Give|$)/.exec(task.question)?.[1] ?? "";
            const [lhs, rhs] = eq.replace(/(\d)x/g, "$1*x").split("=");
            const at = (side: string) => floatMath().evaluate(side.replace(/(\d)\(/g, "$1*("), { x: gold }) as number;
            expect(at(lhs as string), task.question).toBeCloseTo(at(rhs as string), 6);
          }
        }
      }
    }
  });

  it("keeps decimal answers terminating and fractions reduced", () => {
    for (let seed = 0; seed < 300; seed++) {
      const task = generateMathTask(createRng(seed, 2), { difficulty: DIFFICULTIES[seed % 3]! });
      if (task.answer.includes("/")) {
        const [n, d] = task.answer.split("/");
        expect(new Rational(BigInt(n!), BigInt(d!)).toString()).toBe(task.answer);
      }
    }
  });

  it("uses every family when none is chosen", () => {
    const seen = new Set<string>();
    for (let seed = 0; seed < 200; seed++) seen.add(generateMathTask(createRng(seed, 1), { difficulty: "medium" }).family);
    expect([...seen].sort()).toEqual([...MATH_FAMILY_NAMES].sort());
  });
});
