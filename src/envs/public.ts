/**
 * The package's public API (`import … from "edgegym"`): what an environment author and a
 * user of the engine need, hand-picked. Everything else (hashing, version checks, the
 * engine's history and tally plumbing, judge catalogs) is `edgegym/internal`, which may
 * change in any release. test: src/envs/public.test.ts pins these names.
 */
export type {
  AnyEnvironment,
  Dataset,
  EnvKind,
  Environment,
  RespondContext,
  RespondResult,
  Runtime,
  SetupContext,
  SetupResult,
  StopCondition,
  TaskRow,
} from "./types.js";
export { createRng, type Rng } from "./rng.js";
export { CLIENT_PLAYER, SeatAssignment, seatView, toSeat, type EnvSeats, type PolicyContext, type SeatPolicy, type SeatSpec } from "./seats.js";
export { defineRubric, type GroupRewardFn, type GroupRewardSpec, type RewardFn, type RewardInputs, type RewardSpec, type Rubric, type RubricOptions } from "./rubric.js";
export { combineRubrics, type RubricPart } from "./rubric-group.js";
export { judgeRubric, yesNoVerdict, DEFAULT_JUDGE_PROMPT, type JudgeRubricOptions } from "./judge-rubric.js";
export { formatReward, toolUsageRubric } from "./rewards.js";
export { defineTool, type Tool, type ToolContext } from "./tools.js";
export { proceduralDataset, rowsDataset } from "./dataset.js";
export { loadDataset, type LoadDatasetOptions } from "./datasets/load-dataset.js";
export { recordsDataset, type ColumnMapping, type RecordsDatasetOptions } from "./datasets/records-dataset.js";
export { parseRecords, type DatasetFormat, type DataRecord } from "./datasets/parse-records.js";
export { defineEnv, multiTurnEnv, singleTurnEnv, toolEnv, type EnvSpec } from "./define.js";
export { envGroup, type EnvGroupSpec, type GroupLayout } from "./env-group.js";
export { maxTurnsReached, noToolCalls } from "./stop-conditions.js";
export { completionBudget, errorStop, promptBudget, type BudgetOptions, type ErrorStopOptions } from "./stop-budgets.js";
export { EngineError, scoreCompletion, scoreEpisode, startEpisode, stepEpisode, type CompletionItem, type EpisodeSnapshot, type StartOptions } from "./engine.js";
export { scoreGroup } from "./score-group.js";
export { EnvRegistry, type EnvResolution } from "./registry.js";
export { episodeView, listExamples, type EpisodeView } from "./episode-view.js";
export type { Parser } from "./parsers/parser.js";
export { XmlParser, type XmlParserOptions } from "./parsers/xml-parser.js";
export { ThinkParser, type ThinkParserOptions } from "./parsers/think-parser.js";
export { PlainParser } from "./parsers/plain-parser.js";
export { BoxedParser, extractBoxed } from "./parsers/boxed.js";
export { verifyMath, type VerifyMathOptions, type MathVerdict } from "./math/verify.js";
export { mathRubric, type MathRubricOptions } from "./math/rubric.js";
export { createMathDatasetEnv, MathDatasetConfig } from "./builtin/math-dataset/index.js";
export { builtinEnvs } from "./builtin/index.js";
export { createPythonEnv } from "./builtin/python/index.js";
export { mcpToolEnv, type McpToolEnvSpec } from "./mcp/mcp-tool-env.js";
export { mcpHttpServer, type McpServerSource } from "./mcp/servers.js";
