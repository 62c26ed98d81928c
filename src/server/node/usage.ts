import { settingsUsage } from "../settings-doc.js";
import { wrapText } from "../text-wrap.js";

/** `edgegym --help` / `edgegym serve --help`: the commands, then the settings; within 80 columns. */
export const USAGE = wrapText(`edgegym — RL environments for language models as HTTP services

Usage:
  edgegym serve [--port N] [--host H] [--db PATH|:memory:]
      [--env PATH_OR_PACKAGE | --env harbor:DIR]... [--config FILE] [--workers N|auto]
  edgegym eval ENV_ID -m MODEL [-b BASE_URL] [-n N] [-r R] [-c C]
      [--server URL | --env harbor:DIR] ...   (edgegym eval --help)
  edgegym export-sft RESULTS --min-reward X [--best-per-example]
      [--format jsonl|parquet]
  edgegym generate ENV_ID --expert builtin|FILE | --model M [--best-of N] [--min-reward X]   (SFT data; --help)
  edgegym init DIR [--name NAME] [--edgegym SPEC]   an environment package that passes its own tests
  edgegym rescore RUN_DIR [--no-replay] [-c N] [-o FILE]   (score stored rollouts again, without the model)
  edgegym view RUN_DIR... [--port N]   the web console's evaluation pages for runs on disk (vf-eval's too)
  edgegym harbor check DIR [--task NAME]... [--jobs N]   every Harbor task's oracle, then its tests; exit 0 when all score 1

${settingsUsage()}`);
