/** The wire protocol, v1: every body the API accepts or returns, as zod schemas. */
export * from "./messages.js";
export * from "./errors.js";
export * from "./envs.js";
export * from "./episodes.js";
export * from "./model-endpoint.js";
export * from "./scoring.js";
export * from "./evals.js";
export * from "./rescore.js";
export * from "./episode-forks.js";
