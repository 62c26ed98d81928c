import { z } from "zod";
import { EngineError } from "../../engine.js";
import { judgeRubric } from "../../judge-rubric.js";
import { describeJudges, EMPTY_JUDGE_CATALOG, type JudgeCatalog } from "../../judges.js";
import { recordsDataset } from "../../datasets/records-dataset.js";
import { singleTurnEnv } from "../../define.js";
import { ThinkParser } from "../../parsers/think-parser.js";
import { XmlParser } from "../../parsers/xml-parser.js";
import { formatReward } from "../../rewards.js";
import { combineRubrics } from "../../rubric-group.js";
import { defineRubric } from "../../rubric.js";
import type { Environment } from "../../types.js";
import { judgeEndpoint, JudgeChoiceError, type JudgeArgs } from "./endpoint.js";
import questions from "./questions.json" with { type: "json" };

/** Said to a client that still sends a URL: the judge's URL (and the key sent to it) are the operator's. */
export const JUDGE_BASE_URL_REMOVED =
  "judge_base_url is not accepted: the judge key goes only to judges the operator configured. Name one with args.judge (and args.judge_model); a reset without them uses the server's default judge";

const Args = z.strictObject(
  {
    judge: z.string().min(1).max(128).optional().meta({ description: "Name of a judge the operator configured (default: the server's default judge)." }),
    judge_model: z.string().min(1).max(256).optional().meta({ description: "One of that judge's allowed models (default: its first)." }),
  },
  {
    error: (issue) => (issue.code === "unrecognized_keys" && issue.keys.includes("judge_base_url") ? JUDGE_BASE_URL_REMOVED : undefined),
  },
);

/**
 * The args schema of judge-qa bound to one catalog: a judge name or model this server does
 * not offer fails validation itself, so every path that takes env args (reset, /score,
 * an eval job's env_args at POST /v1/evals) refuses it before anything is stored or run.
 */
function argsFor(catalog: JudgeCatalog) {
  return Args.superRefine((args, ctx) => {
    try {
      judgeEndpoint(catalog, args);
    } catch (err) {
      if (!(err instanceof JudgeChoiceError)) throw err;
      ctx.addIssue({ code: "custom", message: err.message, path: args.judge_model !== undefined && /model/.test(err.message) ? ["judge_model"] : ["judge"] });
    }
  });
}

const parser = new ThinkParser({ inner: new XmlParser({ fields: ["answer"] }), requireThink: false });

/**
 * judge-qa wired to an operator's judges. The server builds it through `withServices`
 * from its configuration; `judgeQa` (no judges) refuses resets until then.
 */
export function createJudgeQa(catalog: JudgeCatalog): Environment<JudgeArgs, Record<string, never>> {
  const env = singleTurnEnv<JudgeArgs>({
    id: "judge-qa",
    version: "1.1.0",
    // Names and models are what a client may choose from (never URLs), so GET /v1/envs/judge-qa lists them.
    description:
      "Answer short general-knowledge questions in <answer>…</answer>; an LLM judge compares the answer with the reference. Needs a judge the operator configured (EDGEGYM_JUDGE_* or `judges` in the config file); args.judge picks one by name. " +
      (catalog.judges.length ? `${describeJudges(catalog)}${catalog.defaultJudge ? ` (default "${catalog.defaultJudge}")` : ""}.` : "This server has no judge configured."),
    systemPrompt:
      "Answer the question. You may think inside <think>…</think> first. Then give only the short final answer inside <answer>…</answer>.",
    parser,
    argsSchema: argsFor(catalog),
    dataset: recordsDataset(questions, { columns: { prompt: "question", answer: "answer", info: ["id", "category"] }, evalFraction: 0.15, seed: 2026 }),
    setup: (_row, { args }) => {
      // Fail at reset, not at scoring time after the rollout was generated.
      try {
        judgeEndpoint(catalog, args);
      } catch (err) {
        if (err instanceof JudgeChoiceError) throw new EngineError("invalid_env_args", `judge-qa: ${err.message}`);
        throw err;
      }
      return { state: {} };
    },
    rubric: combineRubrics(
      judgeRubric({ endpoint: ({ args }) => judgeEndpoint(catalog, args as JudgeArgs | undefined), maxConcurrent: 8, timeoutMs: 60_000, name: "judge", weight: 1 }),
      defineRubric([formatReward({ weight: 0.1 })]),
    ),
  }) as Environment<JudgeArgs, Record<string, never>>;
  return { ...env, withServices: (services) => createJudgeQa(services.judges) };
}

/**
 * Short-answer questions scored by an LLM judge against reference answers: the judge
 * accepts "Canberra" for "Canberra, the capital", which exact matching would not. The
 * 117 questions ship with edgegym (general knowledge, written for it).
 */
export const judgeQa = createJudgeQa(EMPTY_JUDGE_CATALOG);
