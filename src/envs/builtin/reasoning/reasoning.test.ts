import { describe, expect, it } from "vitest";
import { scoreCompletion, scoreEpisode, startEpisode, stepEpisode } from "../../engine.js";
import { createRng } from "../../rng.js";
import { parseCountdownExpression } from "./families/countdown-expr.js";
import { REASONING_FAMILIES, reasoning } from "./index.js";

const say = (content: string) => ({ role: "assistant" as const, content });
const COUNTDOWN = { family: "countdown", difficulty: "medium" };

async function play(content: string, seed: number, args?: Record<string, unknown>) {
  const start = await startEpisode(reasoning, { seed, args });
  const { snapshot } = await stepEpisode(reasoning, start, say(content));
  return scoreEpisode(reasoning, snapshot);
}

describe("reasoning verifiers", () => {
  const { countdown, sorting, letter_count: letterCount, string_manipulation: strings, multi_step_arithmetic: steps } = REASONING_FAMILIES;

  it("countdown accepts any expression that reaches the target with the given numbers", () => {
    const task = { answer: "9 * 7 + 2", data: { numbers: [9, 2, 7], target: 65 } };
    const cases: [string, number][] = [
      ["9 * 7 + 2", 1],
      ["2 + 7*9", 1],
      ["9 × 7 + 2 = 65", 1],
      ["(9 * 7) + 2", 1],
      ["9 * 7 + 2 + 2", 0], // 2 used twice
      ["9 * 7 + 3 - 1", 0], // numbers not given
      ["(9 + 2) * 7", 0], // 77
      ["65", 0],
      ["9 * 7 +", 0],
      ["9 / (7 - 7)", 0],
      ["-9 * -7 + 2", 0], // no unary minus
    ];
    for (const [answer, expected] of cases) expect(countdown.verify(answer, task), answer).toBe(expected);
    expect(parseCountdownExpression("(50 - 7) * 6 / 3").value.toString()).toBe("86");
  });

  it("countdown refuses a 30,000-factor product unread (its exact evaluation took 365 ms)", () => {
    const task = { answer: "9 * 7 + 2", data: { numbers: [9, 2, 7], target: 65 } };
    expect(() => countdown.verify("99999999*".repeat(30_000) + "1", task)).toThrow(/AnswerTooLong|past this environment's limit of 500/);
    expect(countdown.verify(`${" ".repeat(480)}9 * 7 + 2`, task)).toBe(1);
  });

  it("sorting, letter counts, strings and arithmetic chains check exactly", () => {
    const sorted = { answer: "62, 71, 74, 87, 89", data: { kind: "numbers", sorted: ["62", "71", "74", "87", "89"] } };
    expect([
      sorting.verify("62, 71, 74, 87, 89", sorted),
      sorting.verify("[62, 71, 74, 87, 89]", sorted),
      sorting.verify("62 71 74 87 89", sorted),
      sorting.verify("62, 74, 71, 87, 89", sorted),
      sorting.verify("62, 71, 74, 87", sorted),
    ]).toEqual([1, 1, 1, 0, 0]);
    const words = { answer: "apple, berry", data: { kind: "words", sorted: ["apple", "berry"] } };
    expect([sorting.verify("Apple, berry", words), sorting.verify("berry, apple", words)]).toEqual([1, 0]);
    const count = { answer: "0", data: { text: "towershake", letter: "u" } };
    expect([letterCount.verify("0", count), letterCount.verify("1", count), letterCount.verify("zero", count)]).toEqual([1, 0, 0]);
    const str = { answer: "aehks", data: {} };
    expect([strings.verify("aehks", str), strings.verify('"aehks"', str), strings.verify("AEHKS", str)]).toEqual([1, 1, 0]);
    expect([steps.verify("120", { answer: "120", data: {} }), steps.verify("120.0", { answer: "120", data: {} }), steps.verify("121", { answer: "120", data: {} })]).toEqual([1, 1, 0]);
  });

  it("accepts every generated reference answer, for every family and difficulty", () => {
    for (const [name, family] of Object.entries(REASONING_FAMILIES)) {
      for (const level of [1, 2, 3] as const) {
        for (let seed = 0; seed < 60; seed++) {
          const task = family.generate(createRng(seed, level), level);
          expect(family.verify(task.answer, task), `${name} L${level} seed ${seed}: ${task.question} → ${task.answer}`).toBe(1);
        }
      }
    }
  });

  it("generates countdown targets every step of whose reference stays integral", () => {
    for (let seed = 0; seed < 200; seed++) {
      const task = REASONING_FAMILIES.countdown.generate(createRng(seed, 9), 3);
      const { numbers, target } = task.data as { numbers: number[]; target: number };
      expect(numbers).toHaveLength(6);
      expect(Number.isInteger(target) && target > 0).toBe(true);
    }
  });
});

describe("reasoning environment", () => {
  it("opens seed 3 (mixed families) with a string task", async () => {
    const s = await startEpisode(reasoning, { seed: 3 });
    expect(s.messages.at(-1)).toEqual({
      role: "user",
      content:
        'Take the string "shake" and (1) remove repeated characters, keeping the first occurrence of each, then (2) sort its characters alphabetically. What is the resulting string? Answer with the string only, no quotes.',
    });
    expect((await reasoning.dataset.row("train", 3, s.args)).info).toMatchObject({ family: "string_manipulation", difficulty: "medium" });
  });

  it("opens a countdown task from args", async () => {
    const s = await startEpisode(reasoning, { seed: 12, args: COUNTDOWN });
    expect(s.messages.at(-1)?.content).toBe(
      "Using the numbers 50, 6, 9, 7, each at most once, and the operations +, -, *, / with parentheses, write an expression equal to 46. Put only the expression inside <answer>…</answer>.",
    );
  });

  it("scores a winning episode: another expression than the reference still wins", async () => {
    // Reference is 50 - 7 - 6 + 9; this one is different and also 46.
    const score = await play("<think>50 - (6 + 7) + 9 = 46</think><answer>50 - (6 + 7) + 9</answer>", 12, COUNTDOWN);
    expect(score.components).toEqual([
      { name: "correct", weight: 1, score: 1 },
      { name: "format", weight: 0.1, score: 1 },
    ]);
    expect(score.reward).toBeCloseTo(1.1, 12);
  });

  it("scores a losing episode: a wrong string with text outside the tags", async () => {
    const score = await play("Here: <answer>aeks</answer>", 3);
    expect(score.components.map((c) => c.score)).toEqual([0, 0.8]);
    expect(score.reward).toBeCloseTo(0.08, 12);
  });

  it("scores a malformed episode: no answer tags", async () => {
    const score = await play("aehks", 3);
    expect(score.reward).toBe(0);
  });

  it("scores statelessly when the caller passes the task's info", async () => {
    const score = await scoreCompletion(reasoning, {
      prompt: "…",
      completion: "<answer>7 * 9 + 2</answer>",
      answer: "9 * 7 + 2",
      info: { family: "countdown", data: { numbers: [9, 2, 7], target: 65 } },
    });
    expect(score.reward).toBeCloseTo(1.1, 12);
    const missing = await scoreCompletion(reasoning, { prompt: "…", completion: "<answer>1</answer>", answer: "1" });
    expect(missing.components[0]).toMatchObject({ score: 0, error: expect.any(String) });
  });

  it("rejects unknown families", async () => {
    await expect(startEpisode(reasoning, { args: { family: "chess" } })).rejects.toThrow(/family/);
  });
});
