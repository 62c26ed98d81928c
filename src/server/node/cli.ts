#!/usr/bin/env node
import cluster from "node:cluster";
import { parseArgs } from "node:util";
import { createMathDatasetEnv } from "../../envs/builtin/math-dataset/index.js";
import { readSource } from "../../envs/datasets/read-source.node.js";
import { loadEnvSpecs, loadMathDatasetConfig, loadServerConfig } from "./config.js";
import { loadEnvModules, splitEnvSpecs } from "../../envs/load-env-modules.node.js";
import { isPostgresUrl, redactPostgresUrl } from "../db/pg/url.js";
import { startNodeServer } from "./serve.js";
import { readServeSettings } from "./settings.js";
import { USAGE } from "./usage.js";

async function serveCommand(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: "string" },
      host: { type: "string" },
      db: { type: "string" },
      env: { type: "string", multiple: true },
      config: { type: "string" },
      workers: { type: "string" },
      "allow-weak-python-sandbox": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  // Every value is read (and checked) before anything starts: a bad one stops here with its name.
  const { port, host, dbPath, synchronous, pgPoolSize, configPath, workers, reapIntervalMs } = readServeSettings(values, process.env);
  const config = loadServerConfig(process.env, configPath);
  if (values["allow-weak-python-sandbox"]) config.pythonAllowWeakSandbox = true;
  // `--env harbor:DIR` serves a directory of Harbor tasks (docs/sandboxes.md); any other --env is a module.
  // No --env flag: the config file's `envs`.
  const { harborDirs, modules } = splitEnvSpecs(loadEnvSpecs(values.env, process.env, configPath));
  const extraEnvs = await loadEnvModules(modules);
  const mathDataset = loadMathDatasetConfig(process.env, configPath);
  if (mathDataset) {
    // Loaded now, so a bad path or URL stops the server at start rather than at a reset.
    const env = createMathDatasetEnv(mathDataset, { read: readSource });
    await env.dataset.ready();
    extraEnvs.push(env);
  }
  if (workers > 1 && dbPath === ":memory:") throw new Error("--workers > 1 needs a database file: each process opens it (an in-memory database is per process)");

  if (workers > 1 && cluster.isPrimary) {
    // Several processes share the port (node:cluster) and the SQLite file (WAL); no
    // episode state lives in a process, so any of them serves any step.
    for (let i = 0; i < workers; i++) cluster.fork();
    cluster.on("exit", (worker, code, signal) => {
      if (code !== 0 && signal !== "SIGTERM" && signal !== "SIGINT") {
        console.error(`worker ${worker.process.pid} exited (${signal ?? code}); starting another`);
        cluster.fork();
      }
    });
    console.log(`edgegym: ${workers} worker processes on http://${host}:${port}`);
    const stopAll = (): void => {
      for (const worker of Object.values(cluster.workers ?? {})) worker?.kill("SIGTERM");
      process.exit(0);
    };
    process.once("SIGINT", stopAll);
    process.once("SIGTERM", stopAll);
    return;
  }
  // With workers, only the first reaps: the reaper is one statement, once is enough.
  const reaps = !cluster.isWorker || cluster.worker?.id === 1;
  const server = await startNodeServer({ port, host, dbPath, synchronous, pgPoolSize, config, extraEnvs, harborDirs, reapIntervalMs: reaps ? reapIntervalMs : 0 });
  console.log(`edgegym listening on ${server.url} (database: ${isPostgresUrl(dbPath) ? redactPostgresUrl(dbPath) : dbPath}; docs: ${server.url}/docs${cluster.isWorker ? `; worker ${cluster.worker?.id}` : ""})`);
  if (config.apiKeys?.length || config.adminApiKeys?.length) console.log(`API keys required on /v1 (${config.apiKeys?.length ?? 0} tenant, ${config.adminApiKeys?.length ?? 0} admin configured)`);
  const stop = (): void => {
    server.close().then(() => process.exit(0), () => process.exit(1));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

// Commands other than serve are imported when run, so `edgegym serve` loads none of their modules.
async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  switch (command) {
    case "serve":
      return serveCommand(rest);
    case "eval":
      process.exitCode = await (await import("../../eval/node/eval-command.js")).evalCommand(rest);
      return;
    case "init":
      process.exitCode = await (await import("./init-command.js")).initCommand(rest);
      return;
    case "export-sft":
      process.exitCode = await (await import("../../eval/node/export-sft-command.js")).exportSftCommand(rest);
      return;
    case "generate":
      process.exitCode = await (await import("../../eval/node/generate-command.js")).generateCommand(rest);
      return;
    case "rescore":
      process.exitCode = await (await import("../../eval/node/rescore-command.js")).rescoreCommand(rest);
      return;
    case "view":
      process.exitCode = await (await import("./view.js")).viewCommand(rest);
      return;
    case "harbor":
      process.exitCode = await (await import("./harbor-check-command.js")).harborCommand(rest);
      return;
    case undefined:
    case "help":
    case "--help":
    case "-h":
      console.log(USAGE);
      return;
    default:
      console.error(`unknown command "${command}"\n\n${USAGE}`);
      process.exitCode = 2;
  }
}

main().catch((err: unknown) => {
  console.error(`edgegym: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
