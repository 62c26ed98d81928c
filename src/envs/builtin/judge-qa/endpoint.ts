import type { JudgeEndpoint } from "../../judge-rubric.js";

/** The environment variables that configure the judge when a reset's args do not. */
export const JUDGE_ENV_VARS = {
  baseURL: "EDGEGYM_JUDGE_BASE_URL",
  model: "EDGEGYM_JUDGE_MODEL",
  apiKey: "EDGEGYM_JUDGE_API_KEY",
} as const;

export interface JudgeArgs {
  judge_base_url?: string | undefined;
  judge_model?: string | undefined;
}

/**
 * Process environment variables where the runtime has them (Node; Workers with
 * nodejs_compat), read through globalThis so this module imports no runtime module.
 */
function envVar(name: string): string | undefined {
  const value = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[name];
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}

export class JudgeNotConfiguredError extends Error {
  constructor() {
    super(
      `judge-qa needs an LLM judge (any OpenAI-compatible chat-completions server): set ${JUDGE_ENV_VARS.baseURL} and ${JUDGE_ENV_VARS.model} ` +
        `(and ${JUDGE_ENV_VARS.apiKey} if the server wants a key) where the server runs, or pass args.judge_base_url and args.judge_model at reset`,
    );
    this.name = "JudgeNotConfiguredError";
  }
}

/**
 * The judge for one episode: args win over environment variables. The API key is read
 * only from the environment: args are stored with the episode and returned by GET.
 */
export function judgeEndpoint(args: JudgeArgs | undefined): JudgeEndpoint {
  const baseURL = args?.judge_base_url ?? envVar(JUDGE_ENV_VARS.baseURL);
  const model = args?.judge_model ?? envVar(JUDGE_ENV_VARS.model);
  if (!baseURL || !model) throw new JudgeNotConfiguredError();
  return { baseURL, model, apiKey: envVar(JUDGE_ENV_VARS.apiKey) };
}
