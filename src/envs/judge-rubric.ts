import type OpenAI from "openai";
import pLimit from "p-limit";
import { contentText } from "../protocol/index.js";
import { classifyJudgeError, consoleJudgeLogger, failureRef, JudgeFailure, type JudgeFailureCode, type JudgeFailureLogger } from "./judge-failure.js";
import { importOpenAI } from "./openai-module.js";
import { defineRubric, type RewardInputs, type Rubric } from "./rubric.js";

/** Where the judge model is served: any OpenAI-compatible chat-completions server. */
export interface JudgeEndpoint {
  baseURL: string;
  model: string;
  /** Default: none. A local vLLM needs none; the openai client insists on one, so "no-key" is sent. */
  apiKey?: string | undefined;
  /** How clients see this judge in errors (never its URL). Default: the model name. */
  name?: string | undefined;
}

export interface JudgeRubricOptions<State> {
  baseURL?: string;
  apiKey?: string;
  model?: string;
  /**
   * The endpoint for one rollout, e.g. from the episode's env args; fields it returns win
   * over the static ones. Lets an environment take its judge from reset arguments.
   */
  endpoint?: (inputs: RewardInputs<State>) => Partial<JudgeEndpoint>;
  /**
   * The user message sent to the judge. `{question}`, `{answer}` (the reference) and
   * `{response}` (what the parser read from the completion) are filled in. Default:
   * `DEFAULT_JUDGE_PROMPT`, which asks for a yes/no verdict.
   */
  promptTemplate?: string;
  /** Turns the judge's reply into a score; throw when it has no verdict. Default: `yesNoVerdict`. */
  parseVerdict?: (reply: string) => number;
  /** Judge requests in flight at once across every rollout this rubric scores. Default 8. */
  maxConcurrent?: number;
  /** Per request; a request that takes longer fails with a timeout error. Default 30 000. */
  timeoutMs?: number;
  /** Retries of a failed request (connection errors, 408/409/429/5xx), by the openai client. Default 1. */
  maxRetries?: number;
  /** Component name and weight. Default `judge`, 1. */
  name?: string;
  weight?: number;
  /** Default 0: a judge should be deterministic where the server allows. */
  temperature?: number;
  /** Default: the server's. */
  maxTokens?: number;
  /**
   * Receives each failure in full (URL, network error, the judge's reply); the score
   * component gets only a code and a reference to it. Default: one `console.error` line.
   */
  log?: JudgeFailureLogger;
}

export const DEFAULT_JUDGE_PROMPT = `You are grading a response to a question against a reference answer.

Question:
{question}

Reference answer:
{answer}

Response:
{response}

Does the response give the same answer as the reference? Equivalent wording, units or formatting count as the same; extra explanation is fine; a different or missing answer is not. Reply with one word: yes or no.`;

/**
 * Reads a yes/no verdict: the first standalone "yes" or "no" after any `</think>`, 1 for
 * yes and 0 for no. Throws when there is neither, so a confused judge shows as an error.
 */
export function yesNoVerdict(reply: string): number {
  const end = reply.lastIndexOf("</think>");
  const region = end >= 0 ? reply.slice(end + "</think>".length) : reply;
  const match = /\b(yes|no)\b/i.exec(region);
  if (!match) throw new Error(`judge reply has no yes/no verdict: ${JSON.stringify(reply.slice(0, 200))}`);
  return (match[1] as string).toLowerCase() === "yes" ? 1 : 0;
}

/** Fills `{name}` placeholders in one pass, so braces inside values are never re-read. */
export function fillTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (whole, key: string) => (key in values ? (values[key] as string) : whole));
}

/** The question a rollout answered: `info.question` when the task has one, else the last user message. */
export function questionOf<State>(inputs: RewardInputs<State>): string {
  const fromInfo = inputs.info.question;
  if (typeof fromInfo === "string") return fromInfo;
  for (let i = inputs.prompt.length - 1; i >= 0; i--) {
    const m = inputs.prompt[i];
    if (m?.role === "user") return contentText(m.content);
  }
  return "";
}

/**
 * A rubric whose one reward asks an LLM whether the response matches the reference answer
 * (the parsed answer; a completion with none scores 0 without a call). Requests go through
 * the openai client, at most `maxConcurrent` at once; a request that fails or times out,
 * or a reply without a verdict, scores 0 with a stable code in the component's `error`
 * (`judge_unreachable`, `judge_timeout`, `judge_http_error`, `judge_bad_verdict`,
 * `judge_error`) and the details in the server log (see `log`).
 *
 * @example
 * const rubric = judgeRubric({ baseURL: "http://127.0.0.1:8000/v1", model: "Qwen/Qwen2.5-7B-Instruct" });
 */
export function judgeRubric<State>(options: JudgeRubricOptions<State> = {}): Rubric<State> {
  const limit = pLimit(options.maxConcurrent ?? 8);
  const timeoutMs = options.timeoutMs ?? 30_000;
  const template = options.promptTemplate ?? DEFAULT_JUDGE_PROMPT;
  const parseVerdict = options.parseVerdict ?? yesNoVerdict;
  const clients = new Map<string, OpenAI>();
  const log = options.log ?? consoleJudgeLogger;

  const fail = (endpoint: JudgeEndpoint, code: JudgeFailureCode, detail: string, status?: number): JudgeFailure => {
    const ref = failureRef();
    const judge = endpoint.name ?? endpoint.model;
    log({ ref, code, judge, model: endpoint.model, baseURL: endpoint.baseURL, detail });
    return new JudgeFailure(code, ref, judge, status);
  };

  const clientFor = (Client: typeof OpenAI, endpoint: JudgeEndpoint): OpenAI => {
    const key = `${endpoint.baseURL}\n${endpoint.apiKey ?? ""}`;
    let client = clients.get(key);
    if (!client) {
      client = new Client({ baseURL: endpoint.baseURL, apiKey: endpoint.apiKey || "no-key", timeout: timeoutMs, maxRetries: options.maxRetries ?? 1 });
      clients.set(key, client);
    }
    return client;
  };

  const resolve = (inputs: RewardInputs<State>): JudgeEndpoint => {
    const dynamic = options.endpoint?.(inputs) ?? {};
    const baseURL = dynamic.baseURL ?? options.baseURL;
    const model = dynamic.model ?? options.model;
    if (!baseURL || !model) throw new Error("no judge configured: give the judge rubric a baseURL and a model");
    const name = dynamic.name;
    return { baseURL, model, apiKey: dynamic.apiKey ?? options.apiKey, ...(name !== undefined ? { name } : {}) };
  };

  return defineRubric<State>([
    {
      name: options.name ?? "judge",
      weight: options.weight ?? 1,
      description: "An LLM judge's verdict on whether the answer matches the reference.",
      fn: async (inputs) => {
        const response = inputs.parser.parseAnswer(inputs.completion);
        if (response === null) return 0;
        const endpoint = resolve(inputs);
        const content = fillTemplate(template, { question: questionOf(inputs), answer: inputs.answer ?? "", response });
        const reply = await limit(async () => {
          try {
            const { default: Client } = await importOpenAI(); // on the first call (start-up time)
            const completion = await clientFor(Client, endpoint).chat.completions.create({
              model: endpoint.model,
              messages: [{ role: "user", content }],
              temperature: options.temperature ?? 0,
              ...(options.maxTokens ? { max_tokens: options.maxTokens } : {}),
            });
            return completion.choices[0]?.message.content ?? "";
          } catch (err) {
            const { code, status, detail } = classifyJudgeError(err);
            throw Object.assign(fail(endpoint, code, detail, status), { cause: err });
          }
        });
        try {
          return parseVerdict(reply);
        } catch (err) {
          const detail = `${err instanceof Error ? err.message : String(err)}; reply: ${JSON.stringify(reply.slice(0, 500))}`;
          throw Object.assign(fail(endpoint, "judge_bad_verdict", detail), { cause: err });
        }
      },
    },
  ]);
}
