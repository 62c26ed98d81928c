import { parseArgs } from "node:util";
import { EvalRequest } from "../../protocol/index.js";
import { loadEnvSpecs, loadServerConfig } from "../../server/node/config.js";
import { splitEnvSpecs } from "../../envs/load-env-modules.node.js";
import { cliRegistry, jsonObjectFlag as json, modelEndpoint, numberFlag as number, SHARED_OPTIONS } from "./cli-flags.js";
import { evalToDir, type EvalToDirResult } from "./eval-to-dir.js";
import { startLocalHarbor, type LocalHarbor } from "./harbor-local.js";
import { createProgressDisplay } from "./progress.js";
import { formatReport } from "./report.js";
import { parseSeatsFlag } from "../seats.js";

export const EVAL_USAGE = `edgegym eval ENV_ID — evaluate a model on an environment (like verifiers' vf-eval)

Model:
  -m, --model NAME              model name sent to the endpoint (default: $EDGEGYM_EVAL_MODEL)
  -b, --base-url URL            OpenAI-compatible endpoint (default: $EDGEGYM_EVAL_BASE_URL,
                                $OPENAI_BASE_URL, or https://api.openai.com/v1)
  -k, --api-key-var NAME        variable holding the key (default OPENAI_API_KEY; unset = no key)
  -t, --max-tokens N            max tokens per model turn
  -T, --temperature X           sampling temperature
  -S, --sampling-args JSON      extra request fields, e.g. '{"top_p":0.9,"seed":1}'
      --max-retries N           retries of a failed model request, with backoff (default 3)
      --timeout SECONDS         limit of one model request (default 600)
Scope:
  -n, --num-examples N          rows to evaluate from index 0; -1 = all (default 5)
  -r, --rollouts-per-example N  rollouts per row (default 3)
  -c, --max-concurrent N        rollouts in flight (default 32)
  -a, --env-args JSON           environment arguments
      --split train|eval        default: eval when the environment has eval rows
      --seed N                  seeds the episodes (default 0)
      --pass-threshold X        reward that counts as a pass for pass@k (default 0.5)
      --seats SEAT=PLAYER,…     an environment with seats (tic-tac-toe-2p, kuhn-poker…): who
                                plays each, client (the model) or one of the environment's
                                policies (GET /v1/envs/ID lists them), e.g. --seats o=minimax;
                                seats left out keep the environment's default. The model
                                plays every client seat, each seat its own conversation
                                (self-play when it has several); the report gives each
                                seat's reward, and a game's wins, draws and losses
      --env-module PATH         load environments from a module (repeatable)
      --env SPEC                an environment as edgegym serve --env takes it
                                (repeatable; default: the config file's "envs"): a
                                module, or harbor:DIR, a directory of Harbor tasks,
                                evaluated as env harbor
      --config FILE             config file (default $EDGEGYM_CONFIG): envs, sandbox
                                settings (docs/configuration.md)
Where episodes run:
      --server URL              drive an edgegym server over HTTP (key: $EDGEGYM_API_KEY)
                                Without it, episodes run in this process; harbor's
                                run in Docker containers, all removed when the run ends
Output:
  -o, --output DIR              base directory (default ./outputs); results go to
                                DIR/evals/ENV--MODEL/RUN_ID/{results.jsonl,metadata.json}
      --format vf03|vf04        verifiers generation of the files: vf03 (default) writes
                                results.jsonl as vf-eval 0.3 does, vf04 traces.jsonl
                                episodes as verifiers 0.4 does (plus metadata.json)
      --resume                  continue the newest unfinished run with these settings
      --resume=RUN_DIR          continue that run
  -v, --verbose                 print every rollout
  -h, --help

Ctrl-C stops the run and saves what is done (a second Ctrl-C quits at once; with
Harbor tasks it removes the run's containers first).`;

/** `--resume=PATH` names a run; a bare `--resume` asks for the newest matching one. */
function splitResume(argv: string[]): { argv: string[]; resume: boolean | string } {
  let resume: boolean | string = false;
  const rest: string[] = [];
  for (const token of argv) {
    if (token === "--resume") resume = true;
    else if (token.startsWith("--resume=")) resume = token.slice("--resume=".length);
    else rest.push(token);
  }
  return { argv: rest, resume };
}

export async function evalCommand(rawArgv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const { argv, resume } = splitResume(rawArgv);
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      ...SHARED_OPTIONS,
      "rollouts-per-example": { type: "string", short: "r" },
      "pass-threshold": { type: "string" },
      "max-retries": { type: "string" },
      timeout: { type: "string" },
      verbose: { type: "boolean", short: "v" },
      env: { type: "string", multiple: true },
      config: { type: "string" },
      seats: { type: "string", multiple: true },
    },
  });
  if (values.help) {
    console.log(EVAL_USAGE);
    return 0;
  }
  if (positionals.length !== 1) throw new Error(`give one environment id (got ${positionals.length ? positionals.join(" ") : "none"}); see edgegym eval --help`);
  const model = values.model ?? env.EDGEGYM_EVAL_MODEL;
  if (!model) throw new Error("--model is required (or set EDGEGYM_EVAL_MODEL)");
  const parsed = EvalRequest.safeParse({
    env_id: positionals[0],
    model,
    num_examples: number("--num-examples", values["num-examples"]),
    rollouts_per_example: number("--rollouts-per-example", values["rollouts-per-example"]),
    max_concurrent: number("--max-concurrent", values["max-concurrent"]),
    max_tokens: number("--max-tokens", values["max-tokens"]),
    temperature: number("--temperature", values.temperature),
    sampling_args: json("--sampling-args", values["sampling-args"]),
    env_args: json("--env-args", values["env-args"]),
    split: values.split,
    seed: number("--seed", values.seed),
    max_retries: number("--max-retries", values["max-retries"]),
    timeout_seconds: number("--timeout", values.timeout),
    pass_threshold: number("--pass-threshold", values["pass-threshold"]),
  });
  if (!parsed.success) throw new Error(parsed.error.issues.map((i) => `${i.path.join(".") || "options"}: ${i.message}`).join("; "));
  const request = { ...parsed.data, model };
  const seats = parseSeatsFlag(values.seats);
  const format = values.format;
  if (format !== undefined && format !== "vf03" && format !== "vf04") throw new Error(`--format must be vf03 or vf04, got "${format}"`);

  const { baseUrl, keyVar, apiKey } = modelEndpoint(values, env);
  if (!apiKey && values["api-key-var"]) console.error(`note: $${keyVar} is not set; sending requests without a key`);
  // `--env` as `edgegym serve` takes it (else the config file's `envs`): modules join the registry, `harbor:DIR` is Harbor tasks.
  const { harborDirs, modules } = splitEnvSpecs(loadEnvSpecs(values.env, env, values.config));
  const registry = await cliRegistry([...(values["env-module"] ?? []), ...modules], env);
  const harborHere = request.env_id === "harbor" && !values.server && !registry.get("harbor");
  if (harborHere && !harborDirs.length) throw new Error("harbor needs its tasks: --env harbor:DIR (a directory of Harbor task directories), or --server URL of a server that serves them");
  if (values.server && values.env?.some((spec) => spec.startsWith("harbor:"))) console.error("note: --env harbor:… is not used with --server; the server serves its own tasks");

  const controller = new AbortController();
  let local: LocalHarbor | undefined;
  let interrupts = 0;
  const quit = (code: number, why: string): void => {
    if (!local) process.exit(code);
    console.error(`${why}: removing this run's containers (label edgegym.db=${local.label}) first`);
    local.removeContainers().then(
      () => process.exit(code),
      (err: unknown) => {
        console.error(`edgegym eval: removing containers failed: ${err instanceof Error ? err.message : String(err)}`);
        process.exit(code);
      },
    );
  };
  const onSigint = (): void => {
    if (++interrupts > 2) process.exit(130);
    if (interrupts > 1) return quit(130, "quitting");
    console.error(
      `\nstopping: finished rollouts are saved; in-flight ones will rerun on --resume${local ? "; containers being made are awaited, then removed" : ""} (Ctrl-C again to quit now)`,
    );
    controller.abort();
  };
  // A plain `kill` of a run with containers: they go too (without them, the default: the process ends).
  const onSigterm = (): void => quit(143, "terminated");
  process.on("SIGINT", onSigint);
  const display = createProgressDisplay(process.stderr);
  try {
    let result: EvalToDirResult;
    try {
      if (harborHere) {
        const config = loadServerConfig(env, values.config);
        local = await startLocalHarbor({ dirs: harborDirs, config, retry: { maxRetries: request.max_retries }, timeoutMs: request.timeout_seconds * 1000 });
        process.on("SIGTERM", onSigterm);
        console.error(`harbor: tasks run in Docker containers labelled edgegym.db=${local.label}, removed when the run ends`);
      }
      result = await evalToDir({
        request,
        baseUrl,
        apiKey,
        server: values.server,
        serverApiKey: env.EDGEGYM_API_KEY,
        registry,
        seats,
        ...(local ? { driver: local.driver } : {}),
        outputBase: values.output ?? "outputs",
        resume,
        signal: controller.signal,
        display,
        verbose: values.verbose ?? false,
        ...(format ? { format } : {}),
        note: (line) => console.error(line),
      });
    } finally {
      if (local) {
        const { removed, error } = await local.close();
        if (removed) console.error(`harbor: removed ${removed} container(s) of episodes the run left open`);
        if (error) console.error(`edgegym eval: ${error}`);
      }
    }
    console.log(
      formatReport(result.summary, {
        envId: request.env_id,
        model: request.model,
        numExamples: result.numExamples,
        rolloutsPerExample: request.rollouts_per_example,
        driver: result.driver,
        runDir: result.runDir,
        seats: result.seats,
        seatSummaries: result.seatSummaries,
      }),
    );
    if (result.status === "failed") {
      console.error(`edgegym eval: stopped: ${result.metadata.error}`);
      return 1;
    }
    if (result.summary.rollouts > 0 && result.summary.errors === result.summary.rollouts) {
      // Nothing was measured: a run whose every rollout failed is a failure, whatever finished.
      const codes = Object.entries(result.summary.errors_by_code).map(([code, count]) => `${code} ${count}`).join(", ");
      console.error(`edgegym eval: every rollout failed (${result.summary.errors}/${result.summary.rollouts}: ${codes}); each one's error is in ${result.runDir}/results.jsonl`);
      return 1;
    }
    if (result.status === "interrupted") {
      console.error(`interrupted: ${result.summary.rollouts}/${result.metadata.total_rollouts} rollouts saved; continue with --resume=${result.runDir}`);
      return 130;
    }
    return 0;
  } finally {
    process.off("SIGINT", onSigint);
    process.off("SIGTERM", onSigterm);
  }
}
