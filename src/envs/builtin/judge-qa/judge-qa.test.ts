import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { inProcessApp } from "../../../../test/support/in-process.js";
import { startRecordingServer, type RecordingServer } from "../../../../test/support/recording-server.js";
import { closedPortURL, startRuleJudgeServer, type RuleJudgeServer } from "../../../../test/support/rule-judge-server.js";
import { envInfo } from "../../info.js";
import type { JudgeCatalog } from "../../judges.js";
import { judgeQa } from "./index.js";
import questions from "./questions.json" with { type: "json" };

let judge: RuleJudgeServer;
let attacker: RecordingServer;
let app: ReturnType<typeof inProcessApp>;

beforeAll(async () => {
  judge = await startRuleJudgeServer();
  attacker = await startRecordingServer();
});
afterAll(async () => {
  await judge.close();
  await attacker.close();
});
afterEach(() => {
  app?.close();
  vi.restoreAllMocks();
});

const catalog = (over: Partial<JudgeCatalog> = {}): JudgeCatalog => ({
  judges: [
    { name: "default", baseURL: judge.baseURL, models: ["rule-judge"], apiKey: "sk-judge-secret" },
    { name: "strict", baseURL: judge.baseURL, models: ["rule-judge-a", "rule-judge-b"] },
  ],
  defaultJudge: "default",
  ...over,
});

async function answerTask(args: Record<string, unknown> | undefined, content: (answer: string) => string) {
  const reset = await app.call("POST", "/v1/envs/judge-qa/episodes", { split: "eval", index: 2, ...(args ? { args } : {}) });
  expect(reset.status).toBe(201);
  const example = await app.call("GET", "/v1/envs/judge-qa/examples?split=eval&offset=2&limit=1");
  const answer = example.json.examples[0].answer as string;
  const id = reset.json.episode_id as string;
  const step = await app.call("POST", `/v1/episodes/${id}/step`, { turn: 0, message: { role: "assistant", content: content(answer) } });
  expect(step.json).toMatchObject({ done: true, stop_reason: "single_turn" });
  const score = await app.call("POST", `/v1/episodes/${id}/score`);
  return { answer, id, score: score.json.score, scoreText: score.text };
}

describe("judge-qa", () => {
  it("ships at least 100 distinct questions with reference answers, split train/eval", () => {
    expect(questions.length).toBeGreaterThanOrEqual(100);
    expect(new Set(questions.map((q) => q.question)).size).toBe(questions.length);
    expect(questions.every((q) => q.answer.trim() && q.category && q.id)).toBe(true);
    expect(judgeQa.dataset.size("train")! + judgeQa.dataset.size("eval")!).toBe(questions.length);
    expect(envInfo(judgeQa).rubric.map((r) => r.name)).toEqual(["judge", "format"]);
  });

  it("refuses a reset with a clear error when the operator configured no judge", async () => {
    app = inProcessApp();
    const res = await app.call("POST", "/v1/envs/judge-qa/episodes", {});
    expect(res.status).toBe(422);
    expect(res.json.error.code).toBe("invalid_env_args");
    expect(res.json.error.message).toMatch(/no LLM judge is configured on this server: the operator sets EDGEGYM_JUDGE_BASE_URL and EDGEGYM_JUDGE_MODEL/);
  });

  it("scores with the operator's default judge, and keeps its URL and key out of the episode", async () => {
    app = inProcessApp({ config: { judges: catalog() } });
    const right = await answerTask(undefined, (a) => `<think>I recall it.</think>\n<answer>${a}</answer>`);
    expect(right.score.components).toEqual([
      { name: "judge", weight: 1, score: 1 },
      { name: "format", weight: 0.1, score: 1 },
    ]);
    expect(judge.prompts.at(-1)).toContain(`Reference answer:\n${right.answer}`);
    const episode = await app.call("GET", `/v1/episodes/${right.id}`);
    expect(episode.text).not.toContain("sk-judge-secret");
    expect(episode.text).not.toContain(judge.baseURL);
    const wrong = await answerTask(undefined, () => "<answer>Atlantis</answer>");
    expect(wrong.score.components[0]).toEqual({ name: "judge", weight: 1, score: 0 });
  });

  it("lets a client pick an operator judge and one of its models by name, and nothing else", async () => {
    app = inProcessApp({ config: { judges: catalog() } });
    const { score } = await answerTask({ judge: "strict", judge_model: "rule-judge-b" }, (a) => `<answer>${a.toUpperCase()}</answer>`);
    expect(score.reward).toBeCloseTo(1.1, 10);
    const unknown = await app.call("POST", "/v1/envs/judge-qa/episodes", { args: { judge: "mine" } });
    expect(unknown.status).toBe(422);
    expect(unknown.json.error.message).toMatch(/no judge "mine"; judges on this server: "default" \(models: "rule-judge"\); "strict" \(models: "rule-judge-a", "rule-judge-b"\)/);
    expect(unknown.text).not.toContain(judge.baseURL);
    const model = await app.call("POST", "/v1/envs/judge-qa/episodes", { args: { judge: "strict", judge_model: "gpt-9" } });
    expect(model.status).toBe(422);
    expect(model.json.error.message).toMatch(/judge "strict" does not serve model "gpt-9"/);
    const described = await app.call("GET", "/v1/envs/judge-qa");
    expect(described.json.description).toMatch(/judges on this server: "default" \(models: "rule-judge"\); "strict" .* \(default "default"\)\.$/);
    expect(described.text).not.toContain(judge.baseURL);
  });

  it("refuses an eval job that names a judge or model the server does not offer, before storing it", async () => {
    app = inProcessApp({ config: { judges: catalog(), evalBaseUrl: attacker.baseURL, evalModel: "m" } });
    for (const env_args of [{ judge: "mine" }, { judge: "strict", judge_model: "gpt-9" }]) {
      const job = await app.call("POST", "/v1/evals", { env_id: "judge-qa", num_examples: 1, rollouts_per_example: 1, env_args });
      expect([job.status, job.json.error.code]).toEqual([422, "invalid_env_args"]);
      expect(job.text).not.toContain(judge.baseURL);
    }
    expect((await app.call("GET", "/v1/evals")).json.evals).toEqual([]);
    expect(attacker.requests).toEqual([]);
  });

  it("sends the judge key to the configured judge only", async () => {
    app = inProcessApp({ config: { judges: { judges: [{ name: "default", baseURL: attacker.baseURL, models: ["m"], apiKey: "sk-only-here" }], defaultJudge: "default" } } });
    const before = attacker.requests.length;
    await answerTask(undefined, (a) => `<answer>${a}</answer>`);
    const seen = attacker.requests.slice(before);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.headers.authorization).toBe("Bearer sk-only-here");
    attacker.requests.length = before;
  });

  describe("a client naming its own judge URL (issue 18: the key went to the attacker)", () => {
    const attack = () => ({ judge_base_url: attacker.baseURL, judge_model: "rule-judge" });

    it("is refused at reset with a 422 that says what to use instead, and nothing is sent", async () => {
      app = inProcessApp({ config: { judges: catalog() } });
      const res = await app.call("POST", "/v1/envs/judge-qa/episodes", { args: attack() });
      expect(res.status).toBe(422);
      expect(res.json.error.code).toBe("invalid_env_args");
      expect(res.json.error.message).toMatch(/judge_base_url is not accepted: the judge key goes only to judges the operator configured\. Name one with args\.judge/);
      expect(attacker.requests).toEqual([]);
    });

    it("is refused by POST /v1/envs/judge-qa/score", async () => {
      app = inProcessApp({ config: { judges: catalog() } });
      const items = [{ prompt: "Capital of France?", completion: "<answer>Paris</answer>", answer: "Paris" }];
      const res = await app.call("POST", "/v1/envs/judge-qa/score", { items, args: attack() });
      expect(res.status).toBe(422);
      expect(res.json.error.message).toMatch(/judge_base_url is not accepted/);
      expect(attacker.requests).toEqual([]);
    });

    it("is refused in an eval job's env_args before the job is stored", async () => {
      app = inProcessApp({ config: { judges: catalog(), evalBaseUrl: attacker.baseURL, evalModel: "m" } });
      const res = await app.call("POST", "/v1/evals", { env_id: "judge-qa", num_examples: 1, rollouts_per_example: 1, env_args: attack() });
      expect(res.status).toBe(422);
      expect(res.json.error.message).toMatch(/judge_base_url is not accepted/);
      expect((await app.call("GET", "/v1/evals")).json.evals).toEqual([]);
      expect(attacker.requests).toEqual([]);
    });
  });

  it("reports an unreachable judge as a stable code, with the address and errno only in the server log", async () => {
    const url = await closedPortURL();
    const logged: string[] = [];
    vi.spyOn(console, "error").mockImplementation((...parts: unknown[]) => void logged.push(parts.map(String).join(" ")));
    app = inProcessApp({ config: { judges: { judges: [{ name: "default", baseURL: url, models: ["gone"] }], defaultJudge: "default" } } });
    const { score, scoreText } = await answerTask(undefined, (a) => `<answer>${a}</answer>`);
    expect(score.components[0].score).toBe(0);
    expect(score.components[0].error).toMatch(/^judge_unreachable: judge "default" could not be reached \(ref (jf_[0-9a-f]{12}); details in the server log\)$/);
    const port = new URL(url).port;
    for (const leak of [port, "127.0.0.1", "ECONNREFUSED", "connect"]) expect(scoreText).not.toContain(leak);
    const ref = /ref (jf_[0-9a-f]{12})/.exec(score.components[0].error)?.[1] as string;
    expect(logged.find((l) => l.includes(ref))).toMatch(new RegExp(`code=judge_unreachable .*url=${url.replaceAll(".", "\\.")}.*ECONNREFUSED`));
  });
});
