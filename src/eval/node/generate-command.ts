import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import type { Split } from "../../protocol/index.js";
import type { EpisodeDriver } from "../driver.js";
import { HttpDriver } from "../http-driver.js";
import { InProcessDriver } from "../in-process-driver.js";
import type { ChatModel } from "../model.js";
import { OpenAIChatModel } from "../openai-model.js";
import { builtinExperts, PolicyModel, type Policy } from "../policy.js";
import { cliRegistry, jsonObjectFlag, modelEndpoint, numberFlag, SHARED_OPTIONS } from "./cli-flags.js";
import { generateSft, writeSftRows } from "./generate.js";
import { createProgressDisplay } from "./progress.js";

export const GENERATE_USAGE = `edgegym generate ENV_ID — play episodes with a policy and keep the good ones as SFT data

Policy (one of):
  -e, --expert builtin|FILE     builtin: the environment's own expert (tic-tac-toe: minimax);
                                FILE: a JS module exporting act(messages, tools) that returns
                                the assistant's text or message (may be async)
  -m, --model NAME              an OpenAI-compatible model (with -b, -k, -t, -T, -S as in eval)
  -b, --base-url URL            default: $EDGEGYM_EVAL_BASE_URL, $OPENAI_BASE_URL, or OpenAI
  -k, --api-key-var NAME        variable holding the key (default OPENAI_API_KEY)
  -t, --max-tokens N   -T, --temperature X   -S, --sampling-args JSON
Selection:
      --best-of N               episodes per task; the best of each is kept (rejection
                                sampling by reward; default 1)
      --min-reward X            keep episodes with reward ≥ X (default: keep all finished)
Scope:
  -n, --num-examples N          tasks from index 0 (default 100)
  -a, --env-args JSON           environment arguments, e.g. '{"opponent":"random"}'
      --split train|eval        default train (keep eval tasks for evaluation)
      --seed N                  episode seeds (default 0)
  -c, --max-concurrent N        episodes in flight (default 16)
      --env-module PATH         load environments from a module (repeatable)
      --server URL              play on an edgegym server over HTTP (key: $EDGEGYM_API_KEY)
Output:
  -o, --output FILE             default sft.jsonl / sft.parquet
      --format jsonl|parquet    the formats of export-sft; rows hold the environment's
                                system prompt, every turn, and its tools when it has any
  -h, --help`;

/** A number flag with its default when absent. */
function num(name: string, raw: string | undefined, fallback: number, check?: (n: number) => boolean): number {
  return numberFlag(name, raw, check) ?? fallback;
}

/** A JSON-object flag, {} when absent. */
function jsonObject(name: string, raw: string | undefined): Record<string, unknown> {
  return jsonObjectFlag(name, raw) ?? {};
}

/** A policy module: `export function act(...)`, or a default export with `act`. */
export async function loadPolicyModule(file: string): Promise<Policy> {
  const path = resolve(file);
  if (!existsSync(path)) throw new Error(`--expert: no file at ${path}`);
  const mod = (await import(pathToFileURL(path).href)) as { act?: unknown; default?: { act?: unknown } };
  const act = typeof mod.act === "function" ? mod.act : typeof mod.default?.act === "function" ? mod.default.act : null;
  if (!act) throw new Error(`--expert ${file}: the module exports no act(messages, tools) function`);
  return { act: act as Policy["act"] };
}

const MAX_BEST_OF = 64;
const MAX_CONCURRENT = 256;

export async function generateCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      ...SHARED_OPTIONS,
      expert: { type: "string", short: "e" },
      "best-of": { type: "string" },
      "min-reward": { type: "string" },
    },
  });
  if (values.help) {
    console.log(GENERATE_USAGE);
    return 0;
  }
  if (positionals.length !== 1) throw new Error("give one environment id; see edgegym generate --help");
  const envId = positionals[0] as string;
  if ((values.expert === undefined) === (values.model === undefined)) throw new Error("give exactly one policy: --expert builtin|FILE or --model NAME");
  const format = values.format ?? "jsonl";
  if (format !== "jsonl" && format !== "parquet") throw new Error(`--format must be jsonl or parquet, got "${format}"`);
  const split = values.split ?? "train";
  if (split !== "train" && split !== "eval") throw new Error(`--split must be train or eval, got "${split}"`);
  const isInt = (lo: number, hi: number) => (n: number) => Number.isInteger(n) && n >= lo && n <= hi;
  const bestOf = num("--best-of", values["best-of"], 1, isInt(1, MAX_BEST_OF));
  const numExamples = num("--num-examples", values["num-examples"], 100, isInt(1, 1_000_000));
  const concurrency = num("--max-concurrent", values["max-concurrent"], 16, isInt(1, MAX_CONCURRENT));
  const seed = num("--seed", values.seed, 0, Number.isSafeInteger);
  const minReward = num("--min-reward", values["min-reward"], -Infinity);
  const sampling: Record<string, unknown> = {
    ...jsonObject("--sampling-args", values["sampling-args"]),
    ...(values["max-tokens"] !== undefined ? { max_tokens: num("--max-tokens", values["max-tokens"], 0, isInt(1, 1_000_000)) } : {}),
    ...(values.temperature !== undefined ? { temperature: num("--temperature", values.temperature, 1, (n) => n >= 0 && n <= 10) } : {}),
  };

  let model: ChatModel;
  if (values.model !== undefined) {
    const { baseUrl, apiKey } = modelEndpoint(values, env);
    model = new OpenAIChatModel({ model: values.model, baseUrl, apiKey, timeoutMs: 600_000 });
  } else if (values.expert === "builtin") {
    const expert = builtinExperts[envId];
    if (!expert) throw new Error(`${envId} has no built-in expert (those with one: ${Object.keys(builtinExperts).join(", ")}); give --expert FILE or --model`);
    model = new PolicyModel(`expert:${envId}`, expert);
  } else {
    model = new PolicyModel(`expert:${values.expert}`, await loadPolicyModule(values.expert as string));
  }
  const retry = { maxRetries: values.model !== undefined ? 3 : 0 };
  const registry = await cliRegistry(values["env-module"], env);
  const driver: EpisodeDriver = values.server
    ? new HttpDriver({ baseUrl: values.server, apiKey: env.EDGEGYM_API_KEY, retry: { maxRetries: 3 }, timeoutMs: 600_000 })
    : new InProcessDriver(registry);

  const controller = new AbortController();
  const onSigint = (): void => controller.abort();
  process.on("SIGINT", onSigint);
  try {
    const result = await generateSft({
      envId,
      driver,
      model,
      numExamples,
      bestOf,
      minReward,
      split: split as Split,
      envArgs: jsonObject("--env-args", values["env-args"]),
      sampling,
      seed,
      concurrency,
      retry,
      signal: controller.signal,
      display: createProgressDisplay(process.stderr),
    });
    const { report } = result;
    const figures = Object.entries(result.metrics).map(([k, v]) => `${k} ${v.toFixed(3)}`).join(", ");
    console.error(`played ${result.rollouts} episodes with ${model.model}: mean reward ${result.meanReward?.toFixed(3) ?? "–"}${figures ? ` (${figures})` : ""}`);
    const leftOut = `${report.failed} failed, ${report.belowMinReward} below the minimum reward, ${report.notBestOfExample} not the best of their task`;
    if (result.rows.length === 0) {
      console.error(`edgegym generate: no episode kept, nothing written (left out: ${leftOut})`);
      return 1;
    }
    const output = values.output ?? (format === "parquet" ? "sft.parquet" : "sft.jsonl");
    await writeSftRows(result.rows, output, format);
    console.log(`wrote ${result.rows.length} conversations to ${output} (left out: ${leftOut})`);
    return result.interrupted ? 130 : 0;
  } finally {
    process.off("SIGINT", onSigint);
  }
}
