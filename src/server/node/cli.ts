#!/usr/bin/env node
import { parseArgs } from "node:util";
import { evalCommand } from "../../eval/node/eval-command.js";
import { exportSftCommand } from "../../eval/node/export-sft-command.js";
import { loadServerConfig } from "./config.js";
import { loadEnvModules } from "./load-envs.js";
import { startNodeServer } from "./serve.js";

const USAGE = `edgegym — RL environments for language models as HTTP services

Usage:
  edgegym serve [--port N] [--host H] [--db PATH|:memory:] [--env PATH_OR_PACKAGE]... [--config FILE]
  edgegym eval ENV_ID -m MODEL [-b BASE_URL] [-n N] [-r R] [-c C] [--server URL] ...   (edgegym eval --help)
  edgegym export-sft RESULTS --min-reward X [--best-per-example] [--format jsonl|parquet]

Environment variables: PORT, HOST, EDGEGYM_DB, EDGEGYM_API_KEYS (comma-separated),
EDGEGYM_CONFIG, EDGEGYM_TTL_SECONDS, EDGEGYM_MAX_TTL_SECONDS, EDGEGYM_BODY_LIMIT_BYTES,
EDGEGYM_REAP_INTERVAL_SECONDS; for evaluation jobs (POST /v1/evals): EDGEGYM_EVAL_BASE_URL,
EDGEGYM_EVAL_API_KEY, EDGEGYM_EVAL_MODEL, EDGEGYM_EVAL_MAX_CONCURRENT_REQUESTS,
EDGEGYM_EVAL_LEASE_SECONDS.
Flags win over variables.`;

async function serveCommand(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: "string" },
      host: { type: "string" },
      db: { type: "string" },
      env: { type: "string", multiple: true },
      config: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const port = Number(values.port ?? process.env.PORT ?? 8787);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid port "${values.port ?? process.env.PORT}"`);
  const host = values.host ?? process.env.HOST ?? "127.0.0.1";
  const dbPath = values.db ?? process.env.EDGEGYM_DB ?? ".edgegym/edgegym.db";
  const config = loadServerConfig(process.env, values.config);
  const extraEnvs = await loadEnvModules(values.env ?? []);
  const reapSeconds = process.env.EDGEGYM_REAP_INTERVAL_SECONDS ? Number(process.env.EDGEGYM_REAP_INTERVAL_SECONDS) : 60;
  const server = await startNodeServer({ port, host, dbPath, config, extraEnvs, reapIntervalMs: reapSeconds * 1000 });
  console.log(`edgegym listening on ${server.url} (database: ${dbPath}; docs: ${server.url}/docs)`);
  if (config.apiKeys?.length) console.log(`API keys required on /v1 (${config.apiKeys.length} configured)`);
  const stop = (): void => {
    server.close().then(() => process.exit(0), () => process.exit(1));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  switch (command) {
    case "serve":
      return serveCommand(rest);
    case "eval":
      process.exitCode = await evalCommand(rest);
      return;
    case "export-sft":
      process.exitCode = await exportSftCommand(rest);
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
