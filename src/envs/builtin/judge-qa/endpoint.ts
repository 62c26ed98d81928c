import { chooseJudge, JudgeChoiceError, type JudgeCatalog } from "../../judges.js";
import type { JudgeEndpoint } from "../../judge-rubric.js";

/** What a client may say about the judge: a name and a model from the operator's catalog, never a URL. */
export interface JudgeArgs {
  judge?: string | undefined;
  judge_model?: string | undefined;
}

export { JudgeChoiceError };

/**
 * The judge for one episode, from the operator's catalog. Args hold only names (they are
 * stored with the episode and returned by GET); the URL and key come from the catalog.
 */
export function judgeEndpoint(catalog: JudgeCatalog, args: JudgeArgs | undefined): JudgeEndpoint {
  return chooseJudge(catalog, { judge: args?.judge, model: args?.judge_model });
}
