import type { JudgeEndpoint } from "./judge-rubric.js";

/**
 * A judge the operator configured: where it is served, the models a client may pick
 * there, and the key sent to it. Clients name a judge, never a URL: the key goes only
 * where the operator said it may go.
 */
export interface OperatorJudge {
  /** What clients pass as `args.judge` (e.g. `default`, `gpt`). */
  name: string;
  baseURL: string;
  /** Models a client may ask for; the first is used when the client names none. Never empty. */
  models: readonly string[];
  apiKey?: string | undefined;
}

/** Every judge the operator allows, and the one used when a client names none. */
export interface JudgeCatalog {
  judges: readonly OperatorJudge[];
  /** Name of the judge used when a client names none; null: the client must name one. */
  defaultJudge: string | null;
}

export const EMPTY_JUDGE_CATALOG: JudgeCatalog = { judges: [], defaultJudge: null };

/**
 * Operator-side things an environment may need, handed to it when the server builds its
 * registry (`EnvRegistry.withServices`): environments stay pure and never read
 * `process.env`, which a Worker does not have.
 */
export interface EnvServices {
  judges: JudgeCatalog;
}

export const NO_SERVICES: EnvServices = { judges: EMPTY_JUDGE_CATALOG };

/** Why a client's judge choice cannot be served, said so the client can fix it. */
export class JudgeChoiceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "JudgeChoiceError";
  }
}

/** Names and models a client may choose from, for error messages (never URLs or keys). */
export function describeJudges(catalog: JudgeCatalog): string {
  if (!catalog.judges.length) return "this server has no judge configured";
  return `judges on this server: ${catalog.judges.map((j) => `"${j.name}" (models: ${j.models.map((m) => `"${m}"`).join(", ")})`).join("; ")}`;
}

/**
 * The endpoint for a client's choice: a judge by name (default: the operator's default)
 * and one of its models (default: its first). Throws JudgeChoiceError otherwise.
 */
export function chooseJudge(catalog: JudgeCatalog, choice: { judge?: string | undefined; model?: string | undefined }): JudgeEndpoint & { name: string } {
  const name = choice.judge ?? catalog.defaultJudge;
  if (name === null) {
    if (!catalog.judges.length) {
      throw new JudgeChoiceError(
        "no LLM judge is configured on this server: the operator sets EDGEGYM_JUDGE_BASE_URL and EDGEGYM_JUDGE_MODEL (and EDGEGYM_JUDGE_API_KEY), or `judges` in the config file",
      );
    }
    throw new JudgeChoiceError(`name a judge in args.judge; ${describeJudges(catalog)}`);
  }
  const judge = catalog.judges.find((j) => j.name === name);
  if (!judge) throw new JudgeChoiceError(`no judge "${name}"; ${describeJudges(catalog)}`);
  const model = choice.model ?? judge.models[0];
  if (model === undefined || !judge.models.includes(model)) {
    throw new JudgeChoiceError(`judge "${judge.name}" does not serve model "${String(model)}"; ${describeJudges(catalog)}`);
  }
  return { name: judge.name, baseURL: judge.baseURL, model, apiKey: judge.apiKey };
}
