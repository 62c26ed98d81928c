import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { inProcessApp } from "../../../../test/support/in-process.js";
import { closedPortURL, startRuleJudgeServer, type RuleJudgeServer } from "../../../../test/support/rule-judge-server.js";
import { envInfo } from "../../info.js";
import { JUDGE_ENV_VARS } from "./endpoint.js";
import { judgeQa } from "./index.js";
import questions from "./questions.json" with { type: "json" };

let judge: RuleJudgeServer;
let app: ReturnType<typeof inProcessApp>;
const saved = Object.fromEntries(Object.values(JUDGE_ENV_VARS).map((k) => [k, process.env[k]]));

beforeAll(async () => {
  judge = await startRuleJudgeServer();
  for (const k of Object.values(JUDGE_ENV_VARS)) delete process.env[k];
});
afterAll(async () => {
  await judge.close();
  for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k];
  else process.env[k] = v;
});
afterEach(() => {
  app?.close();
  for (const k of Object.values(JUDGE_ENV_VARS)) delete process.env[k];
});

async function answerTask(args: Record<string, unknown> | undefined, content: (answer: string) => string) {
  const reset = await app.call("POST", "/v1/envs/judge-qa/episodes", { split: "eval", index: 2, ...(args ? { args } : {}) });
  expect(reset.status).toBe(201);
  const example = await app.call("GET", "/v1/envs/judge-qa/examples?split=eval&offset=2&limit=1");
  const answer = example.json.examples[0].answer as string;
  const id = reset.json.episode_id as string;
  const step = await app.call("POST", `/v1/episodes/${id}/step`, { turn: 0, message: { role: "assistant", content: content(answer) } });
  expect(step.json).toMatchObject({ done: true, stop_reason: "single_turn" });
  return { answer, score: (await app.call("POST", `/v1/episodes/${id}/score`)).json.score };
}

describe("judge-qa", () => {
  it("ships at least 100 distinct questions with reference answers, split train/eval", () => {
    expect(questions.length).toBeGreaterThanOrEqual(100);
    expect(new Set(questions.map((q) => q.question)).size).toBe(questions.length);
    expect(questions.every((q) => q.answer.trim() && q.category && q.id)).toBe(true);
    expect(judgeQa.dataset.size("train")! + judgeQa.dataset.size("eval")!).toBe(questions.length);
    expect(envInfo(judgeQa).rubric.map((r) => r.name)).toEqual(["judge", "format"]);
  });

  it("refuses a reset with a clear error when no judge is configured", async () => {
    app = inProcessApp({ envs: [judgeQa] });
    const res = await app.call("POST", "/v1/envs/judge-qa/episodes", {});
    expect(res.status).toBe(422);
    expect(res.json.error.code).toBe("invalid_env_args");
    expect(res.json.error.message).toMatch(/set EDGEGYM_JUDGE_BASE_URL and EDGEGYM_JUDGE_MODEL .* or pass args\.judge_base_url and args\.judge_model/);
  });

  it("scores with the judge named in the reset's args", async () => {
    app = inProcessApp({ envs: [judgeQa] });
    const args = { judge_base_url: judge.baseURL, judge_model: "rule-judge" };
    const right = await answerTask(args, (a) => `<think>I recall it.</think>\n<answer>${a}</answer>`);
    expect(right.score.components).toEqual([
      { name: "judge", weight: 1, score: 1 },
      { name: "format", weight: 0.1, score: 1 },
    ]);
    expect(judge.prompts.at(-1)).toContain(`Reference answer:\n${right.answer}`);
    const wrong = await answerTask(args, () => "<answer>Atlantis</answer>");
    expect(wrong.score.components[0]).toEqual({ name: "judge", weight: 1, score: 0 });
  });

  it("reads the judge from environment variables", async () => {
    process.env[JUDGE_ENV_VARS.baseURL] = judge.baseURL;
    process.env[JUDGE_ENV_VARS.model] = "rule-judge";
    process.env[JUDGE_ENV_VARS.apiKey] = "sk-test";
    app = inProcessApp({ envs: [judgeQa] });
    const { score } = await answerTask(undefined, (a) => `<answer>${a.toUpperCase()}</answer>`);
    expect(score.reward).toBeCloseTo(1.1, 10);
  });

  it("reports an unreachable judge on the component instead of a silent 0", async () => {
    app = inProcessApp({ envs: [judgeQa] });
    const url = await closedPortURL();
    const { score } = await answerTask({ judge_base_url: url, judge_model: "gone" }, (a) => `<answer>${a}</answer>`);
    expect(score.components[0].score).toBe(0);
    expect(score.components[0].error).toMatch(/^Error: judge gone at http:\/\/127\.0\.0\.1:\d+\/v1: cannot connect \(connect ECONNREFUSED/);
  });
});
