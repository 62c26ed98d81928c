import { EDGEGYM_VERSION } from "../../version.js";

/** Top-level fields of the OpenAPI document; the paths come from the routes. */
export const OPENAPI_INFO = {
  openapi: "3.1.0",
  info: {
    title: "edgegym",
    version: EDGEGYM_VERSION,
    description:
      "Reinforcement-learning environments for language models as durable HTTP episodes. Reset an episode, step it one assistant message at a time, score it with the environment's rubric. Every error body is `{\"error\": {\"code\", \"message\", \"request_id\", \"details?\"}}` with a stable code.",
  },
  servers: [{ url: "http://127.0.0.1:8787", description: "A local `npm start`" }],
  security: [{ bearerAuth: [] }],
};
