import { describe, expect, it } from "vitest";
import { z } from "zod";
import { rowsDataset } from "./dataset.js";
import { singleTurnEnv } from "./define.js";
import { startEpisode, stepEpisode, scoreEpisode } from "./engine.js";
import { envInfo } from "./info.js";
import { XmlParser } from "./parsers/xml-parser.js";
import { formatReward } from "./rewards.js";
import { combineRubrics } from "./rubric-group.js";
import { defineRubric, scoreRubric, scoreRubricGroup, type RewardInputs } from "./rubric.js";
import { scoreCompletionGroup, scoreGroup } from "./score-group.js";

const parser = new XmlParser({ fields: ["answer"] });

function inputs(text: string, answer = "4"): RewardInputs<null> {
  const completion = [{ role: "assistant" as const, content: text }];
  return { prompt: [{ role: "user", content: "2+2?" }], completion, answer, info: {}, state: null, parser, task: { prompt: "2+2?", answer } };
}

const correct = { name: "correct", weight: 1, fn: ({ completion, answer, parser }: RewardInputs<null>) => Number(parser.parseAnswer(completion) === answer) };
/** 1 for the shortest correct completion(s) of the group, 0 for the others. */
const shortestCorrect = {
  name: "shortest_correct",
  weight: 0.5,
  description: "Bonus for the shortest correct rollout of the group.",
  fn: (group: readonly RewardInputs<null>[]) => {
    const lengths = group.map((g) => (g.parser.parseAnswer(g.completion) === g.answer ? JSON.stringify(g.completion).length : Infinity));
    const best = Math.min(...lengths);
    return lengths.map((l) => Number(l === best && Number.isFinite(l)));
  },
};

describe("group rewards", () => {
  const rubric = defineRubric<null>([correct], { groupRewards: [shortestCorrect] });

  it("computes a group reward once over the group, one value per rollout", async () => {
    const scores = await scoreRubricGroup(rubric, [inputs("<answer>4</answer> and more words"), inputs("<answer>4</answer>"), inputs("<answer>5</answer>")]);
    expect(scores.map((s) => s.reward)).toEqual([1, 1.5, 0]);
    expect(scores[1]?.components).toEqual([
      { name: "correct", weight: 1, score: 1 },
      { name: "shortest_correct", weight: 0.5, score: 1 },
    ]);
  });

  it("scores a rollout alone as a group of one", async () => {
    const score = await scoreRubric(rubric, inputs("<answer>4</answer> long"));
    expect(score.reward).toBe(1.5);
  });

  it("reports a group reward that throws or miscounts on every member, scored 0", async () => {
    const broken = defineRubric<null>([correct], {
      groupRewards: [
        { name: "throws", weight: 1, fn: () => { throw new Error("boom"); } },
        { name: "short", weight: 1, fn: () => [1] },
        { name: "nan", weight: 1, fn: (g) => g.map(() => NaN) },
      ],
    });
    const scores = await scoreRubricGroup(broken, [inputs("<answer>4</answer>"), inputs("<answer>4</answer>")]);
    for (const s of scores) {
      expect(s.reward).toBe(1);
      expect(s.components.find((c) => c.name === "throws")?.error).toBe("Error: boom");
      expect(s.components.find((c) => c.name === "short")?.error).toBe("returned 1 values for a group of 2");
      expect(s.components.find((c) => c.name === "nan")?.error).toMatch(/NaN .* not a finite number/);
    }
  });

  it("keeps zero-weight group rewards as metrics", async () => {
    const metric = defineRubric<null>([correct], { groupRewards: [{ name: "group_size", weight: 0, fn: (g) => g.map(() => g.length) }] });
    const [score] = await scoreRubricGroup(metric, [inputs("a"), inputs("b"), inputs("c")]);
    expect(score?.metrics.group_size).toBe(3);
  });

  it("rejects a group reward named like a reward", () => {
    expect(() => defineRubric<null>([correct], { groupRewards: [{ ...shortestCorrect, name: "correct" }] })).toThrow(/two rewards named "correct"/);
  });

  it("still accepts a metrics function as the second argument", async () => {
    const withMetrics = defineRubric<null>([correct], () => ({ chars: 3 }));
    expect((await scoreRubric(withMetrics, inputs("<answer>4</answer>"))).metrics).toEqual({ chars: 3 });
  });
});

describe("combineRubrics", () => {
  it("keeps every reward, group reward and metric, names unique", async () => {
    const a = defineRubric<null>([correct, formatReward()], () => ({ a: 1 }));
    const b = defineRubric<null>([{ ...correct, weight: 2 }, formatReward({ weight: 0.1 })], { metrics: () => ({ b: 2 }), groupRewards: [shortestCorrect] });
    const combined = combineRubrics(a, b, { rubric: b, prefix: "strict/", scale: 0.5 });
    expect(combined.rewards.map((r) => [r.name, r.weight])).toEqual([
      ["correct", 1],
      ["format", 0.2],
      ["correct_2", 2],
      ["format_2", 0.1],
      ["strict/correct", 1],
      ["strict/format", 0.05],
    ]);
    expect(combined.groupRewards?.map((r) => [r.name, r.weight])).toEqual([
      ["shortest_correct", 0.5],
      ["strict/shortest_correct", 0.25],
    ]);
    const score = await scoreRubric(combined, inputs("<answer>4</answer>"));
    expect(score.reward).toBeCloseTo(1 + 0.2 + 2 + 0.1 + 1 + 0.05 + 0.5 + 0.25);
    expect(score.metrics).toEqual({ a: 1, b: 2, "strict/b": 2 });
  });

  it("suffixes a name that is still taken", () => {
    const r = defineRubric<null>([correct]);
    const taken = defineRubric<null>([{ ...correct, name: "correct_2" }]);
    expect(combineRubrics(r, taken, r).rewards.map((x) => x.name)).toEqual(["correct", "correct_2", "correct_3"]);
    expect(combineRubrics(r, r, taken).rewards.map((x) => x.name)).toEqual(["correct", "correct_2", "correct_2_3"]);
  });
});

describe("scoreGroup and env info", () => {
  const env = singleTurnEnv<{ bonus: number }, Record<string, never>>({
    id: "group-test",
    version: "1.0.0",
    description: "2+2",
    parser,
    argsSchema: z.object({ bonus: z.number().default(1) }).strict(),
    dataset: rowsDataset({ train: [{ prompt: "2+2?", answer: "4" }] }),
    rubric: defineRubric([
      { name: "correct", weight: 1, fn: ({ completion, answer, parser }) => Number(parser.parseAnswer(completion) === answer) },
      { name: "bonus", weight: 1, fn: ({ args }) => (args as { bonus: number }).bonus },
    ], {
      groupRewards: [{ name: "unique", weight: 1, description: "1 when no other rollout wrote the same text.", fn: (g) => g.map((x, i) => Number(g.every((y, j) => j === i || JSON.stringify(y.completion) !== JSON.stringify(x.completion)))) }],
    }),
  });

  it("publishes group rewards with group: true", () => {
    expect(envInfo(env).rubric).toEqual([
      { name: "correct", weight: 1, group: false },
      { name: "bonus", weight: 1, group: false },
      { name: "unique", weight: 1, group: true, description: "1 when no other rollout wrote the same text." },
    ]);
  });

  it("scores episodes of one task together, passing each episode's args to the rewards", async () => {
    const texts = ["<answer>4</answer>", "<answer>4</answer>", "<answer>5</answer>"];
    const snapshots = await Promise.all(
      texts.map(async (content, i) => (await stepEpisode(env, await startEpisode(env, { index: 0, seed: i, args: { bonus: i } }), { role: "assistant", content })).snapshot),
    );
    const scores = await scoreGroup(env, snapshots);
    expect(scores.map((s) => s.reward)).toEqual([1 + 0 + 0, 1 + 1 + 0, 0 + 2 + 1]);
    expect(scores[0]?.metrics.turns).toBe(1);
    // Alone, an episode is a group of one: unique.
    expect((await scoreEpisode(env, snapshots[0]!)).reward).toBe(2);
    const completions = await scoreCompletionGroup(env, texts.map((completion) => ({ prompt: "2+2?", completion, answer: "4" })), { bonus: 0 });
    expect(completions.map((s) => s.reward)).toEqual([1, 1, 1]);
  });
});
