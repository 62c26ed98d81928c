import { z } from "zod";
import { EnvHash } from "./envs.js";
import { EpisodeId, Score } from "./episodes.js";

export const RescoreRubric = z.enum(["episode", "current"]).meta({
  description:
    "`episode` (default): the rubric of the environment the episode was started on, which this server must still run (else 409 `env_version_mismatch`). `current`: the rubric of the version this server runs now, whatever the episode was started on.",
  example: "current",
});
export type RescoreRubric = z.infer<typeof RescoreRubric>;

export const RescoreRequest = z
  .object({
    rubric: RescoreRubric.default("episode"),
    save: z
      .boolean()
      .default(false)
      .meta({ description: "Store the new score in place of the old one (what GET and POST …/score return from then on). Default false: the stored score is left as it is." }),
  })
  .strict()
  .meta({ id: "RescoreRequest", example: { rubric: "current", save: false } });
export type RescoreRequest = z.infer<typeof RescoreRequest>;

export const RescoreResponse = z
  .object({
    episode_id: EpisodeId,
    score: Score.meta({ description: "The score the rubric gives the stored transcript now." }),
    previous_score: Score.nullable().meta({ description: "The score stored before this call; null when the episode had not been scored." }),
    rubric: RescoreRubric,
    env_version: z.string().meta({ description: "Version of the environment whose rubric scored it.", example: "1.1.0" }),
    env_hash: EnvHash.meta({ description: "Content hash of the environment whose rubric scored it." }),
    episode_env_version: z.string().meta({ description: "Version the episode was started on.", example: "1.0.0" }),
    episode_env_hash: EnvHash.nullable().meta({ description: "Content hash recorded at reset; null for an episode stored before hashes were recorded." }),
    saved: z.boolean().meta({ description: "True when the new score replaced the stored one (`save: true`)." }),
    scored_at: z.iso.datetime().meta({ description: "When this score was computed (ISO 8601, UTC)." }),
  })
  .strict()
  .meta({ id: "RescoreResponse" });
export type RescoreResponse = z.infer<typeof RescoreResponse>;
