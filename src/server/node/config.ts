import { readFileSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import { z } from "zod";
import { serverConfigFromVars } from "../config-vars.js";
import type { ServerConfig } from "../context.js";
import type { MathDatasetConfig } from "../../envs/builtin/math-dataset/index.js";
import { ALL_SETTINGS, PROCESS_SETTINGS, settingValue, type Setting } from "../settings.js";
import { HARBOR_ENV_PREFIX } from "../../envs/load-env-modules.node.js";

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

/** A config file's env entry with its relative path resolved against `dir` (a package name is left to the loader). */
function fromConfigDir(spec: string, dir: string): string {
  if (spec.startsWith(HARBOR_ENV_PREFIX)) {
    const path = spec.slice(HARBOR_ENV_PREFIX.length);
    return path && !isAbsolute(path) ? `${HARBOR_ENV_PREFIX}${resolve(dir, path)}` : spec;
  }
  return spec.startsWith(".") ? resolve(dir, spec) : spec;
}

/**
 * The environments to load (`--env` of serve and eval): the flags when any is given, else the
 * config file's `envs`, whose relative paths (`./my-env.js`, `harbor:tasks`) are the file's
 * directory's, so a config file works from wherever the command runs.
 */
export function loadEnvSpecs(flags: readonly string[] | undefined, env: NodeJS.ProcessEnv, configPath?: string): string[] {
  if (flags?.length) return [...flags];
  const path = configPath ?? env.EDGEGYM_CONFIG;
  const listed = settingValue(PROCESS_SETTINGS.envs, {}, readConfigFile(path));
  if (!path || !listed) return [];
  const dir = dirname(resolve(path));
  return listed.map((spec) => fromConfigDir(spec, dir));
}
