import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineRubric, rowsDataset, singleTurnEnv, XmlParser } from "../../envs/index.js";
import { inProcessApp } from "../../../test/support/in-process.js";

/** Correctness per rollout, plus a group reward: 1 for the rollouts whose answer is the group's majority. */
const majorityEnv = singleTurnEnv<{ weight: number }>({
  id: "majority",
  version: "1.0.0",
  description: "Answer; the group's majority answer earns a bonus.",
  parser: new XmlParser({ fields: ["answer"] }),
  argsSchema: z.object({ weight: z.number().default(1) }).strict(),
  dataset: rowsDataset({ train: [{ prompt: "2+2?", answer: "4" }] }),
  rubric: defineRubric(
    [
      { name: "correct", weight: 1, fn: ({ completion, answer, parser }) => Number(parser.parseAnswer(completion) === answer) },
      { name: "arg", weight: 0, fn: ({ args }) => (args as { weight: number }).weight },
    ],
    {
      groupRewards: [
        {
          name: "majority",
          weight: 0.5,
          fn: (group) => {
            const answers = group.map((g) => g.parser.parseAnswer(g.completion));
            const counts = new Map<string | null, number>();
            for (const a of answers) counts.set(a, (counts.get(a) ?? 0) + 1);
            const top = Math.max(...counts.values());
            return answers.map((a) => Number(counts.get(a) === top));
          },
        },
      ],
    },
  ),
});

describe("POST /v1/envs/{id}/score with group rewards", () => {
  let app: ReturnType<typeof inProcessApp>;
  afterEach(() => app.close());

  it("scores items of one group together and ungrouped items alone", async () => {
    app = inProcessApp({ envs: [majorityEnv] });
    const items = [
      { prompt: "2+2?", completion: "<answer>4</answer>", answer: "4", group: "g1" },
      { prompt: "2+2?", completion: "<answer>5</answer>", answer: "4", group: "g1" },
      { prompt: "2+2?", completion: "<answer>4</answer>", answer: "4", group: "g1" },
      { prompt: "2+2?", completion: "<answer>5</answer>", answer: "4", group: "g2" },
      { prompt: "2+2?", completion: "<answer>5</answer>", answer: "4" },
    ];
    const res = await app.call("POST", "/v1/envs/majority/score", { items, args: { weight: 3 } });
    expect(res.status).toBe(200);
    const rewards = res.json.results.map((r: { score: { reward: number } }) => r.score.reward);
    // g1: majority "4" → 1 + 0.5, minority "5" → 0; g2 alone → majority of one; ungrouped → a group of one.
    expect(rewards).toEqual([1.5, 0, 1.5, 0.5, 0.5]);
    expect(res.json.results[0].score.components).toContainEqual({ name: "majority", weight: 0.5, score: 1 });
    expect(res.json.results[0].score.metrics).toMatchObject({ arg: 3, turns: 1 });
    expect(res.json.groups).toEqual([
      { group: "g1", size: 3, mean: 1, std: expect.closeTo(Math.sqrt(0.5), 10) },
      { group: "g2", size: 1, mean: 0.5, std: 0 },
    ]);
    expect(res.json.results[1].advantage).toBeCloseTo(-1, 10);
  });

  it("publishes the group reward in the env's info", async () => {
    app = inProcessApp({ envs: [majorityEnv] });
    const res = await app.call("GET", "/v1/envs/majority");
    expect(res.json.rubric).toContainEqual({ name: "majority", weight: 0.5, group: true });
  });
});

describe("POST /v1/envs/{env_id}/score with abusive input", () => {
  const open: ReturnType<typeof inProcessApp>[] = [];
  afterEach(() => {
    while (open.length) open.pop()?.close();
  });
  const setup = () => {
    const app = inProcessApp();
    open.push(app);
    return app;
  };
  it("30k-character reverse-text completion and answer: 200, lcs_ratio 0 with the reason (the bounded path, not a 13 s DP)", async () => {
    const { call } = setup();
    const big = "ab".repeat(15_000);
    const res = await call("POST", "/v1/envs/reverse-text/score", { items: [{ prompt: big, completion: `<answer>${big}</answer>`, answer: big }] });
    expect(res.status).toBe(200);
    expect(res.json.results[0].score.components[0]).toMatchObject({ name: "lcs_ratio", score: 0, error: expect.stringMatching(/AnswerTooLongError: answer is 30000 characters/) });
  });

  it("1,600-element math set against itself reversed: 200, correct 0 with the reason", async () => {
    const { call } = setup();
    const items = Array.from({ length: 1600 }, (_, i) => `${i}`);
    const res = await call("POST", "/v1/envs/math/score", { items: [{ prompt: "p", completion: `<answer>{${items.join(",")}}</answer>`, answer: `{${items.reverse().join(",")}}` }] });
    expect(res.status).toBe(200);
    expect(res.json.results[0].score.components[0]).toMatchObject({ name: "correct", score: 0, error: expect.stringMatching(/AnswerTooLongError/) });
  });

  it("a batch of 1,024 items in groups and alone is scored, each result in its place", async () => {
    const { call } = setup();
    const items = Array.from({ length: 1024 }, (_, i) => ({ prompt: "p", completion: `<answer>${i % 7}</answer>`, answer: String(i % 7), ...(i % 2 ? { group: `g${i % 5}` } : {}) }));
    const res = await call("POST", "/v1/envs/math/score", { items });
    expect(res.status).toBe(200);
    expect(res.json.results.map((r: { index: number }) => r.index)).toEqual(items.map((_, i) => i));
    expect(res.json.results.every((r: { score: { reward: number } }) => r.score.reward > 1)).toBe(true);
    expect(res.json.groups.map((g: { size: number }) => g.size).reduce((a: number, b: number) => a + b, 0)).toBe(512);
  });
});
