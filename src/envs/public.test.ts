import { describe, expect, it } from "vitest";
import * as publicApi from "./public.js";
import * as internal from "./index.js";

describe("the package root (edgegym)", () => {
  it("exports exactly the hand-picked runtime names; a change here is an API change", () => {
    expect(Object.keys(publicApi).sort()).toMatchInlineSnapshot(`
      [
        "BoxedParser",
        "CLIENT_PLAYER",
        "DEFAULT_JUDGE_PROMPT",
        "EngineError",
        "EnvRegistry",
        "MathDatasetConfig",
        "PlainParser",
        "SeatAssignment",
        "ThinkParser",
        "XmlParser",
        "builtinEnvs",
        "combineRubrics",
        "completionBudget",
        "createMathDatasetEnv",
        "createPythonEnv",
        "createRng",
        "defineEnv",
        "defineRubric",
        "defineTool",
        "envGroup",
        "episodeView",
        "errorStop",
        "extractBoxed",
        "formatReward",
        "judgeRubric",
        "listExamples",
        "loadDataset",
        "mathRubric",
        "maxTurnsReached",
        "mcpHttpServer",
        "mcpToolEnv",
        "multiTurnEnv",
        "noToolCalls",
        "parseRecords",
        "proceduralDataset",
        "promptBudget",
        "recordsDataset",
        "rowsDataset",
        "scoreCompletion",
        "scoreEpisode",
        "scoreGroup",
        "seatView",
        "singleTurnEnv",
        "startEpisode",
        "stepEpisode",
        "toSeat",
        "toolEnv",
        "toolUsageRubric",
        "verifyMath",
        "yesNoVerdict",
      ]
    `);
  });

  it("keeps engine internals out of the root: they are edgegym/internal", () => {
    for (const name of ["envContentHash", "hashAs", "tallyTranscript", "historyNotLoaded", "judgeCatalogFrom", "executeToolCalls", "assertEnvVersion", "ENV_ID_KEY"]) {
      expect(publicApi, name).not.toHaveProperty(name);
    }
    expect(internal).toHaveProperty("envContentHash");
    for (const name of Object.keys(publicApi)) expect(internal, name).toHaveProperty(name);
  });
});
