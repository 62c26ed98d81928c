import { z } from "zod";
import { chooseJudge, JudgeChoiceError, type JudgeCatalog } from "../../judges.js";
import type { JudgeEndpoint } from "../../judge-rubric.js";

/**
 * The model that plays the user seat when a reset gives it to `llm`: one of the operator's
 * judges, by name (never a URL: the key goes only where the operator said it may), and one
 * of that judge's models. The operator configures it as any judge (EDGEGYM_JUDGE_* or
 * `judges` in the config file); a reset without `user_model` gets the default judge.
 */
export const UserModelArgs = z.strictObject({
  judge: z.string().min(1).max(128).optional().meta({ description: "Name of a judge the operator configured, whose model plays the user (default: the server's default judge)." }),
  model: z.string().min(1).max(256).optional().meta({ description: "One of that judge's allowed models (default: its first)." }),
  temperature: z.number().min(0).max(2).optional().meta({ description: "Sampling temperature of the user's model (default 0: as repeatable as the server allows)." }),
  max_tokens: z.number().int().min(1).max(8192).optional().meta({ description: "Most tokens per user message (default: the server's)." }),
});
export type UserModelArgs = z.infer<typeof UserModelArgs>;

export const CustomerServiceArgs = z.strictObject({
  user_model: UserModelArgs.optional().meta({ description: 'The LLM that plays the user seat when the reset gives it to "llm" (`"seats": {"user": "llm"}`).' }),
});
export type CustomerServiceArgs = z.infer<typeof CustomerServiceArgs>;

/** The endpoint of the episode's user model. Throws JudgeChoiceError when the catalog has no such judge or model. */
export function userModelEndpoint(catalog: JudgeCatalog, args: CustomerServiceArgs | undefined): JudgeEndpoint & { name: string } {
  return chooseJudge(catalog, { judge: args?.user_model?.judge, model: args?.user_model?.model });
}

/**
 * The args schema bound to one catalog: a `user_model` this server does not offer fails
 * validation itself, so every path that takes env args refuses it before anything runs.
 * Without `user_model` the args are valid whatever the catalog (the scripted user needs no
 * model); `setup` checks that an `llm` user has one.
 */
export function argsFor(catalog: JudgeCatalog) {
  return CustomerServiceArgs.superRefine((args, ctx) => {
    if (!args.user_model) return;
    try {
      userModelEndpoint(catalog, args);
    } catch (err) {
      if (!(err instanceof JudgeChoiceError)) throw err;
      const field = args.user_model.model !== undefined && /model/.test(err.message) ? "model" : "judge";
      ctx.addIssue({ code: "custom", message: err.message, path: ["user_model", field] });
    }
  });
}
