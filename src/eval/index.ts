/**
 * Evaluation and synthetic data: run an environment against an OpenAI-compatible model,
 * in this process or through an edgegym server, and aggregate what came back. Nothing
 * here touches the file system or a runtime module; the CLI's I/O lives in ./node.
 */
export * from "./errors.js";
export * from "./retry.js";
export * from "./model.js";
export * from "./openai-model.js";
export * from "./driver.js";
export * from "./in-process-driver.js";
export * from "./http-driver.js";
export * from "./plan.js";
export * from "./rollout.js";
export * from "./runner.js";
export * from "./stats.js";
export * from "./seats.js";
export * from "./metadata.js";
export * from "./sft.js";
