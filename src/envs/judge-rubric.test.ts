import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closedPortURL, sameAnswerRule, startRuleJudgeServer, type RuleJudgeServer } from "../../test/support/rule-judge-server.js";
import type { JudgeFailureLog } from "./judge-failure.js";
import { fillTemplate, judgeRubric, yesNoVerdict } from "./judge-rubric.js";
import { PlainParser } from "./parsers/plain-parser.js";
import { XmlParser } from "./parsers/xml-parser.js";
import { scoreRubric, type RewardInputs } from "./rubric.js";

function inputs(question: string, response: string, answer: string, args?: unknown): RewardInputs<null> {
  return {
    prompt: [{ role: "system", content: "Answer briefly." }, { role: "user", content: question }],
    completion: [{ role: "assistant", content: response }],
    answer,
    info: {},
    state: null,
    parser: new XmlParser({ fields: ["answer"] }),
    task: { prompt: question, answer },
    args,
  };
}

describe("yesNoVerdict and fillTemplate", () => {
  it("reads the first yes/no after any think block, and throws without one", () => {
    expect(yesNoVerdict("Yes.")).toBe(1);
    expect(yesNoVerdict("no")).toBe(0);
    expect(yesNoVerdict("<think>yes? no...</think> YES")).toBe(1);
    expect(() => yesNoVerdict("maybe")).toThrow(/no yes\/no verdict/);
    expect(() => yesNoVerdict("eyes")).toThrow();
  });

  it("fills placeholders once, leaving braces in values and unknown names alone", () => {
    expect(fillTemplate("{question} / {response} / {other}", { question: "{response}", response: "x" })).toBe("{response} / x / {other}");
  });
});

describe("judgeRubric against an OpenAI-compatible server", () => {
  let server: RuleJudgeServer;
  beforeAll(async () => {
    // "SLOW" responses answer after 2 s, "GARBLE" ones without a verdict, "FAIL" with a 500.
    server = await startRuleJudgeServer((prompt) => {
      if (prompt.includes("SLOW")) return { reply: "yes", delayMs: 2_000 };
      if (prompt.includes("GARBLE")) return { reply: "I would rather not say." };
      if (prompt.includes("FAIL")) return { reply: "overloaded", status: 500 };
      return { ...sameAnswerRule(prompt), delayMs: 30 };
    });
  });
  afterAll(async () => server.close());

  it("scores yes as 1 and no as 0, sending question, reference and parsed response", async () => {
    const rubric = judgeRubric<null>({ baseURL: server.baseURL, model: "rule-judge", maxRetries: 0 });
    const yes = await scoreRubric(rubric, inputs("Capital of France?", "<answer>Paris</answer>", "Paris"));
    expect(yes.components).toEqual([{ name: "judge", weight: 1, score: 1 }]);
    const no = await scoreRubric(rubric, inputs("Capital of France?", "<answer>Lyon</answer>", "Paris"));
    expect(no.components).toEqual([{ name: "judge", weight: 1, score: 0 }]);
    const sent = server.prompts.at(-1) as string;
    expect(sent).toContain("Question:\nCapital of France?");
    expect(sent).toContain("Reference answer:\nParis");
    expect(sent).toContain("Response:\nLyon");
  });

  it("scores a completion without an answer 0 without calling the judge", async () => {
    const rubric = judgeRubric<null>({ baseURL: server.baseURL, model: "rule-judge" });
    const before = server.prompts.length;
    const score = await scoreRubric(rubric, inputs("Q?", "no tags", "x"));
    expect(score.components).toEqual([{ name: "judge", weight: 1, score: 0 }]);
    expect(server.prompts.length).toBe(before);
  });

  it("keeps at most maxConcurrent requests in flight", async () => {
    const local = await startRuleJudgeServer((prompt) => ({ ...sameAnswerRule(prompt), delayMs: 40 }));
    try {
      const rubric = judgeRubric<null>({ baseURL: local.baseURL, model: "rule-judge", maxConcurrent: 2 });
      const scores = await Promise.all(Array.from({ length: 8 }, (_, i) => scoreRubric(rubric, inputs(`Q${i}?`, `<answer>${i % 2 ? "odd" : "even"}</answer>`, "even"))));
      expect(scores.map((s) => s.reward)).toEqual([1, 0, 1, 0, 1, 0, 1, 0]);
      expect(local.prompts.length).toBe(8);
      expect(local.maxInFlight()).toBe(2);
    } finally {
      await local.close();
    }
  });

  // A failure reaches the score as a code and a reference; the URL, the network error and
  // the judge's reply reach only the log (issue 18: these texts made a port scanner).
  const REF = /\(ref (jf_[0-9a-f]{12}); details in the server log\)$/;
  const logged = (): { log: (e: JudgeFailureLog) => void; events: JudgeFailureLog[] } => {
    const events: JudgeFailureLog[] = [];
    return { log: (e) => void events.push(e), events };
  };

  it("times out a slow judge and reports it on the component", async () => {
    const { log, events } = logged();
    const rubric = judgeRubric<null>({ baseURL: server.baseURL, model: "rule-judge", timeoutMs: 300, maxRetries: 0, log });
    const score = await scoreRubric(rubric, inputs("Q?", "<answer>SLOW</answer>", "SLOW"));
    expect(score.reward).toBe(0);
    expect(score.components[0]?.error).toMatch(/^judge_timeout: judge "rule-judge" did not reply in time /);
    expect(score.components[0]?.error).toMatch(REF);
    expect(events).toMatchObject([{ code: "judge_timeout", judge: "rule-judge", baseURL: server.baseURL }]);
  });

  it("reports a server error and a reply without a verdict", async () => {
    const { log, events } = logged();
    const rubric = judgeRubric<null>({ baseURL: server.baseURL, model: "rule-judge", maxRetries: 0, log });
    const failed = await scoreRubric(rubric, inputs("Q?", "<answer>FAIL</answer>", "x"));
    expect(failed.components[0]?.error).toMatch(/^judge_http_error: judge "rule-judge" answered HTTP 500 \(ref /);
    expect(failed.components[0]?.error).not.toContain("overloaded");
    const garbled = await scoreRubric(rubric, inputs("Q?", "<answer>GARBLE</answer>", "x"));
    expect(garbled.components[0]?.error).toMatch(/^judge_bad_verdict: judge "rule-judge" replied without a verdict \(ref /);
    expect(garbled.components[0]?.error).not.toContain("rather not say");
    expect(events.map((e) => e.code)).toEqual(["judge_http_error", "judge_bad_verdict"]);
    expect(events[0]?.detail).toContain("overloaded");
    expect(events[1]?.detail).toMatch(/no yes\/no verdict: "I would rather not say\."/);
  });

  it("reports an unreachable judge without its address or errno", async () => {
    const url = await closedPortURL();
    const { log, events } = logged();
    const rubric = judgeRubric<null>({ baseURL: url, model: "nobody", maxRetries: 0, timeoutMs: 2_000, log });
    const score = await scoreRubric(rubric, inputs("Q?", "<answer>a</answer>", "a"));
    const error = score.components[0]?.error ?? "";
    expect(error).toMatch(/^judge_unreachable: judge "nobody" could not be reached /);
    for (const leak of [new URL(url).port, "127.0.0.1", "ECONNREFUSED"]) expect(error).not.toContain(leak);
    expect(events[0]?.ref).toBe(REF.exec(error)?.[1]);
    expect(events[0]?.detail).toContain(`ECONNREFUSED ${new URL(url).host}`);
  });

  it("takes its endpoint per rollout, and says so when there is none", async () => {
    const rubric = judgeRubric<null>({
      endpoint: ({ args }) => (args as { judge?: { baseURL: string; model: string } } | undefined)?.judge ?? {},
      maxRetries: 0,
    });
    const configured = await scoreRubric(rubric, inputs("Q?", "<answer>a</answer>", "a", { judge: { baseURL: server.baseURL, model: "rule-judge" } }));
    expect(configured.reward).toBe(1);
    const missing = await scoreRubric(rubric, inputs("Q?", "<answer>a</answer>", "a"));
    expect(missing.components[0]?.error).toMatch(/no judge configured/);
  });

  it("uses a custom template, verdict parser and parser", async () => {
    const rubric = judgeRubric<null>({
      baseURL: server.baseURL,
      model: "rule-judge",
      name: "graded",
      weight: 2,
      promptTemplate: "Reference answer:\n{answer}\n\nResponse:\n{response}\n\nDoes the response match?",
      parseVerdict: (reply) => (reply.startsWith("Yes") ? 0.75 : 0.25),
    });
    const score = await scoreRubric(rubric, { ...inputs("Q?", "  Paris ", "paris"), parser: new PlainParser() });
    expect(score.components).toEqual([{ name: "graded", weight: 2, score: 0.75 }]);
    expect(score.reward).toBe(1.5);
  });
});
