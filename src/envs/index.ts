/** Authoring API for environments, and the engine that runs them. */
export * from "./types.js";
export * from "./rng.js";
export * from "./rubric.js";
export * from "./tools.js";
export * from "./dataset.js";
export * from "./define.js";
export * from "./stop-conditions.js";
export * from "./engine.js";
export * from "./advantages.js";
export * from "./info.js";
export * from "./registry.js";
export * from "./parsers/parser.js";
export * from "./parsers/xml-parser.js";
export * from "./parsers/think-parser.js";
export * from "./parsers/plain-parser.js";
export * from "./parsers/boxed.js";
export * from "./rewards.js";
export { builtinEnvs } from "./builtin/index.js";
