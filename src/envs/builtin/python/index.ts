import { z } from "zod";
import { proceduralDataset } from "../../dataset.js";
import { toolEnv } from "../../define.js";
import { XmlParser } from "../../parsers/xml-parser.js";
import { formatReward, toolUsageRubric } from "../../rewards.js";
import { combineRubrics } from "../../rubric-group.js";
import { defineRubric } from "../../rubric.js";
import { defineTool } from "../../tools.js";
import type { Environment } from "../../types.js";
import type { PythonResult, PythonRunner } from "./runner.js";
import { normaliseInteger, pythonTask } from "./tasks.js";

/**
 * Bounds on one episode's session. Every call replays the earlier cells, so without them a
 * long session costs quadratic time and its stored state grows without limit.
 */
export const MAX_CELLS = 64;
export const MAX_CELL_CHARS = 20_000;
export const MAX_SESSION_CHARS = 200_000;

const Args = z
  .object({
    timeout_ms: z.number().int().min(100).max(60_000).default(10_000).meta({ description: "Time limit of one python call (ms)." }),
    output_cap: z.number().int().min(100).max(100_000).default(4_000).meta({ description: "Characters of output returned per call." }),
  })
  .strict();
type Args = z.infer<typeof Args>;

/**
 * The episode's Python session, kept as the code that built it: each call replays these
 * cells on a fresh interpreter, so the session lives in the stored state and any process
 * can serve the next step.
 */
const State = z
  .object({
    cells: z.array(z.string()),
    seed: z.number().int().min(0),
    timeoutMs: z.number().int(),
    outputCap: z.number().int(),
  })
  .strict();
type State = z.infer<typeof State>;

const Params = z
  .object({
    code: z.string().min(1).max(MAX_CELL_CHARS).meta({ description: "Python code to run. Variables, functions and imports persist across calls. Print what you want to see; a final expression's value is shown." }),
    cells: z.array(z.string()),
    seed: z.number(),
    timeoutMs: z.number(),
    outputCap: z.number(),
  })
  .strict();

function describe(result: PythonResult, timeoutMs: number, outputCap: number): string {
  if (result.status === "timeout") {
    return result.phase === "replay"
      ? "Error: re-running this session's earlier code took too long; the session is unchanged, try simpler code."
      : `Error: the code ran longer than ${timeoutMs} ms and was stopped; nothing it defined is kept.`;
  }
  if (result.status === "crashed") return `Error: the Python interpreter crashed (${result.output}); nothing this code defined is kept.`;
  let text = result.output === "" ? "(no output)" : result.output;
  if (result.truncated) text += `\n[output truncated to ${outputCap} characters]`;
  return text;
}

/** The `python` tool over a runner: the session's cells and limits come from the state, hidden from the model. */
function pythonTool(runner: PythonRunner) {
  return defineTool<State, typeof Params>({
    name: "python",
    description:
      "Runs Python 3 (Pyodide, standard library only) in this conversation's session: no network, no files kept between calls, " +
      "time, memory and output limits; earlier calls are re-run before each call to restore the variables.",
    parameters: Params,
    hiddenArgs: { cells: (s) => s.cells, seed: (s) => s.seed, timeoutMs: (s) => s.timeoutMs, outputCap: (s) => s.outputCap },
    // The runner enforces the real limits; this outer one only guards against a stuck runner
    // (interpreter start-up and the replay budget included).
    timeoutMs: 180_000,
    run: async ({ code, cells, seed, timeoutMs, outputCap }, { signal }) => {
      const used = cells.reduce((n, c) => n + c.length, 0);
      if (cells.length >= MAX_CELLS || used + code.length > MAX_SESSION_CHARS) {
        return `Error: this session is full (${cells.length} cells, ${used} characters; at most ${MAX_CELLS} cells and ${MAX_SESSION_CHARS} characters). Nothing was run.`;
      }
      const result = await runner.run({ replay: cells, code, seed, timeoutMs, outputCap }, signal);
      // Code that finished (even by raising) is part of the session; code that was stopped is not.
      if (result.status === "ok" || result.status === "error") cells.push(code);
      return describe(result, timeoutMs, outputCap);
    },
  });
}

const parser = new XmlParser({ fields: ["think", "answer"], optional: ["think"] });

/**
 * A tool environment: number problems solved with a Python interpreter. Node only (the
 * interpreter is Pyodide in a sandboxed process); `runner` is where the code runs.
 */
export function createPythonEnv(runner: PythonRunner): Environment<Args, State> {
  const env = toolEnv<Args, State>({
    id: "python",
    version: "1.0.0",
    description:
      "Number problems (prime sums, modular powers, counting) solved with a `python` tool that keeps variables across calls; final answer in <answer>…</answer>. Node only.",
    systemPrompt:
      "Solve the problem. You can run Python 3 with the `python` tool: variables persist between calls, print what you need to see. " +
      "When you know the answer, reply without calling a tool, giving only the final integer inside <answer>…</answer>.",
    parser,
    argsSchema: Args as z.ZodType<Args>,
    stateSchema: State,
    dataset: proceduralDataset((rng) => pythonTask(rng)),
    maxTurns: 8,
    setup: (_row, { args, rng }) => ({ state: { cells: [], seed: rng.int(0, 2 ** 31 - 1), timeoutMs: args.timeout_ms, outputCap: args.output_cap } }),
    tools: [pythonTool(runner)],
    runtimes: ["node"],
    rubric: combineRubrics(defineRubric<State>([
      {
        name: "correct",
        weight: 1,
        description: "The answer is the exact integer.",
        fn: ({ completion, answer, parser }) => Number(normaliseInteger(parser.parseAnswer(completion)) === answer),
      },
      formatReward({ weight: 0.2, finalOnly: true }),
    ]), toolUsageRubric<State>()),
  });
  return runner.isolation ? Object.assign(env, { isolation: () => runner.isolation?.() ?? { level: "unknown", detail: "" } }) : env;
}

/** Where no Python can run (the Worker build): registering this makes a reset answer env_unavailable. */
const unavailable: PythonRunner = {
  run: () => Promise.reject(new Error("the python environment runs only on the Node build")),
};

/**
 * The `python` environment as other runtimes declare it: same id and description, runtimes
 * ["node"], so their registry reports it unavailable rather than unknown.
 */
export const pythonEnvDeclaration = createPythonEnv(unavailable);
