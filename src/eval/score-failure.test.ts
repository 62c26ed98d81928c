import { afterAll, describe, expect, it } from "vitest";
import { defineRubric, EnvRegistry, rowsDataset, singleTurnEnv } from "../envs/index.js";
import { scoreFailure, type Score } from "../protocol/index.js";
import { startScriptedModel, type ScriptedModelServer } from "../../test/support/scripted-model.js";
import { InProcessDriver } from "./in-process-driver.js";
import { OpenAIChatModel } from "./openai-model.js";
import type { EvalRollout } from "../protocol/index.js";
import { SummaryBuilder } from "./stats.js";
import { runRollouts } from "../../test/support/eval-run.js";

/** A verifier that cannot give a reward, as a sandboxed environment reports one: the error text starts with its code. */
class TestsOverran extends Error {
  readonly clientText = "verifier_timeout: the task's tests ran past their time limit";
}

const overrun = singleTurnEnv({
  id: "tests-overrun",
  version: "1.0.0",
  description: "Every rollout's tests time out.",
  dataset: rowsDataset({ train: [{ prompt: "say hi", answer: "hi" }] }),
  rubric: defineRubric([
    {
      name: "tests",
      weight: 1,
      fn: () => {
        throw new TestsOverran("tests overran");
      },
    },
  ]),
});

describe("a score that could not be given", () => {
  let model: ScriptedModelServer | undefined;
  afterAll(async () => model?.close());

  it("is found by its code on a weighted component, never on a metric or a judge's failure", () => {
    const score = (error: string, weight = 1): Score => ({ reward: 0, metrics: {}, components: [{ name: "tests", weight, score: 0, error }] });
    expect(scoreFailure(score("verifier_timeout: too slow"))).toEqual({ code: "verifier_timeout", component: "tests", message: "verifier_timeout: too slow" });
    expect(scoreFailure(score("reward_file_missing: none"))?.code).toBe("reward_file_missing");
    expect(scoreFailure(score("verifier_timeout: too slow", 0))).toBeNull();
    expect(scoreFailure(score("judge_timeout: judge default (ref j1)"))).toBeNull();
    expect(scoreFailure({ reward: 1, metrics: {}, components: [{ name: "tests", weight: 1, score: 1 }] })).toBeNull();
  });

  it("makes an evaluation's rollout an error (score_failed:CODE), counted apart from reward 0", async () => {
    model = await startScriptedModel(() => ({ content: "hi" }));
    const chat = new OpenAIChatModel({ model: "scripted", baseUrl: model.baseUrl, timeoutMs: 10_000 });
    const driver = new InProcessDriver(new EnvRegistry("node", [overrun]));
    const examples = await driver.examples("tests-overrun", "train", 0, 1);
    const rows = await runRollouts({ envId: "tests-overrun", driver, model: chat, specs: [{ example: examples[0] as (typeof examples)[number], rolloutIndex: 0, seed: 1 }] });
    expect(rows).toHaveLength(1);
    expect(rows[0]?.reward).toBe(0);
    expect(rows[0]?.error).toMatchObject({ error: "score_failed:verifier_timeout", error_chain_str: expect.stringMatching(/^verifier_timeout: /) });
    const summary = new SummaryBuilder(0.5, 1);
    summary.add(rows[0] as EvalRollout);
    expect(summary.errorCount).toBe(1);
  });
});
