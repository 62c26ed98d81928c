import { z } from "@hono/zod-openapi";
import { EpisodeId } from "../../protocol/index.js";

/** The `{env_id}` of every environment route, declared once. */
export const EnvParams = z.object({ env_id: z.string().meta({ description: "An environment's id, as GET /v1/envs lists it.", example: "reverse-text" }) });

/** The `{episode_id}` of every episode route, declared once. */
export const EpisodeParams = z.object({ episode_id: EpisodeId });
