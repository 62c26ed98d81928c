import { readFileSync } from "node:fs";
import { z } from "zod";
import { serverConfigFromVars } from "../config-vars.js";
import type { ServerConfig } from "../context.js";
import type { MathDatasetConfig } from "../../envs/builtin/math-dataset/index.js";
import { ALL_SETTINGS, settingValue, type Setting } from "../settings.js";

/** A config file (`EDGEGYM_CONFIG=path.json` or `--config`): every setting of the table with a file key, each optional. */
const ConfigFile = z
  .object(Object.fromEntries(ALL_SETTINGS.flatMap((row) => (row.fileKey !== null && row.file !== null ? [[row.fileKey, row.file.optional()]] : []))))
  .strict();

/** The config file at `path`, checked against the table; {} when there is none. */
export function readConfigFile(path: string | undefined): Record<string, unknown> {
  if (!path) return {};
  const parsed = ConfigFile.safeParse(JSON.parse(readFileSync(path, "utf8")));
  if (!parsed.success) throw new Error(`config file ${path}: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  return parsed.data;
}

/**
 * Server settings from the environment, then the config file; the environment wins.
 * API keys from both are accepted.
 */
export function loadServerConfig(env: NodeJS.ProcessEnv, configPath?: string): Partial<ServerConfig> {
  return serverConfigFromVars(env, readConfigFile(configPath ?? env.EDGEGYM_CONFIG), "node");
}

const MATH_DATASET = ALL_SETTINGS.find((row) => row.variable === "EDGEGYM_MATH_DATASET") as Setting<MathDatasetConfig>;

/**
 * The `math-dataset` environment's settings: `EDGEGYM_MATH_DATASET` (JSON, or just a
 * source path or URL), else the config file's `math_dataset`; undefined when neither is
 * set (the environment is then not served).
 */
export function loadMathDatasetConfig(env: NodeJS.ProcessEnv, configPath?: string): MathDatasetConfig | undefined {
  // The variable first, so a bad config file does not hide a good variable (and is not read when unneeded).
  const fromVariable = settingValue(MATH_DATASET, env, {});
  return fromVariable ?? settingValue(MATH_DATASET, {}, readConfigFile(configPath ?? env.EDGEGYM_CONFIG));
}
