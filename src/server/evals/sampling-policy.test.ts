import { describe, expect, it } from "vitest";
import { EvalRequest } from "../../protocol/index.js";
import { ApiError } from "../errors.js";
import { checkServerSampling } from "./sampling-policy.js";

const limits = { maxTokens: 1000 };
const check = (body: Record<string, unknown>) => checkServerSampling(EvalRequest.parse({ env_id: "math", ...body }), limits);
const refusal = (body: Record<string, unknown>): string => {
  try {
    check(body);
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe("invalid_request");
    return (err as ApiError).message;
  }
  throw new Error("accepted");
};

describe("checkServerSampling", () => {
  it("accepts what vf-eval and TRL users set, within bounds", () => {
    const sampling_args = { top_p: 0.9, top_k: 50, min_p: 0.05, seed: 7, stop: ["</answer>"], presence_penalty: 0.5, frequency_penalty: -0.5, repetition_penalty: 1.1, logprobs: true, top_logprobs: 5, n: 1, chat_template_kwargs: { enable_thinking: false } };
    expect(check({ sampling_args, max_tokens: 1000, temperature: 0.7 })).toMatchObject({ sampling_args, max_tokens: 1000 });
  });

  it("sends the operator's cap as max_tokens when the job names no token limit", () => {
    expect(check({}).max_tokens).toBe(1000);
    expect(check({ sampling_args: { max_completion_tokens: 10 } }).max_tokens).toBeUndefined();
    expect(check({ max_tokens: 5 }).max_tokens).toBe(5);
  });

  it("refuses the payloads of issue 18 and says the limit", () => {
    expect(refusal({ sampling_args: { n: 128 } })).toMatch(/^sampling_args\.n: .*use rollouts_per_example/);
    expect(refusal({ sampling_args: { max_tokens: 100000 } })).toBe("sampling_args.max_tokens: at most 1000 on this server");
    expect(refusal({ max_tokens: 100000 })).toBe("max_tokens 100000 is past this server's limit of 1000; ask for at most 1000");
    expect(refusal({ sampling_args: { max_completion_tokens: 1001 } })).toMatch(/at most 1000/);
  });

  it("refuses unknown keys by name, with the allowed ones, and unbounded values", () => {
    expect(refusal({ sampling_args: { stream: true } })).toMatch(/^sampling_args\.stream is not accepted on this server: the server reads whole replies/);
    expect(refusal({ sampling_args: { best_of: 4 } })).toMatch(/best_of is not accepted/);
    expect(refusal({ sampling_args: { extra_body: {} } })).toMatch(/^sampling_args\.extra_body is not accepted on this server: allowed keys: temperature, top_p, /);
    const bias = Object.fromEntries(Array.from({ length: 301 }, (_, i) => [String(i), 1]));
    expect(refusal({ sampling_args: { logit_bias: bias } })).toMatch(/at most 300 token ids/);
    expect(check({ sampling_args: { logit_bias: { "50256": -100 } } }).sampling_args).toEqual({ logit_bias: { "50256": -100 } });
    expect(refusal({ sampling_args: { stop: Array.from({ length: 9 }, () => "x") } })).toMatch(/^sampling_args\.stop/);
    expect(refusal({ sampling_args: { temperature: 50 } })).toMatch(/^sampling_args\.temperature/);
  });
});
