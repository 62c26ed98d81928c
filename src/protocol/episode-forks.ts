import { z } from "zod";
import { EpisodeId, EpisodeStatus } from "./episodes.js";

/** Most forks one page of GET /v1/episodes/{id}/forks may hold. */
export const MAX_FORKS_PAGE = 200;

export const ForkListQuery = z
  .object({
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(MAX_FORKS_PAGE)
      .default(50)
      .meta({ description: `Most forks to return (1–${MAX_FORKS_PAGE}, default 50).`, example: 50 }),
    cursor: z
      .string()
      .min(1)
      .max(200)
      .regex(/^[A-Za-z0-9_-]+$/)
      .optional()
      .meta({ description: "Where the page starts: the `next_cursor` of the page before (opaque). Default: the first fork." }),
  })
  .strict()
  .meta({ id: "ForkListQuery" });
export type ForkListQuery = z.infer<typeof ForkListQuery>;

export const EpisodeFork = z
  .object({
    episode_id: EpisodeId,
    fork_turn: z.number().int().min(0).meta({ description: "The parent's turn this fork was made after (its `parent.turn`).", example: 3 }),
    turn: z.number().int().min(0).meta({ description: "The turn the fork is at now.", example: 5 }),
    status: EpisodeStatus,
    reward: z.number().nullable().meta({ description: "The fork's stored score (`score.reward`); null while unscored.", example: 1 }),
    created_at: z.iso.datetime().meta({ description: "When the fork was made (ISO 8601, UTC).", example: "2026-11-22T12:00:03.120Z" }),
  })
  .strict()
  .meta({ id: "EpisodeFork", description: "One episode forked from this one: where it branched off, where it is, how it scored." });
export type EpisodeFork = z.infer<typeof EpisodeFork>;

export const ForkList = z
  .object({
    episode_id: EpisodeId,
    forks: z.array(EpisodeFork).meta({ description: "Episodes forked from this one (its direct children), oldest first." }),
    next_cursor: z.string().nullable().meta({ description: "Pass as `cursor` for the next page; null when this page is the last." }),
  })
  .strict()
  .meta({ id: "ForkList", description: "A page of an episode's forks." });
export type ForkList = z.infer<typeof ForkList>;
