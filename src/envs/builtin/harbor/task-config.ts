/**
 * A Harbor task.toml, parsed and resolved into what edgegym needs to run the task:
 * `parseTaskToml` checks the text against Harbor's schema (defaults filled in, unknown
 * keys reported as warnings) and refuses the Harbor features edgegym does not run;
 * `resolveTaskConfig` turns the result into `ResolvedTaskConfig` — limits, the network of
 * each phase as a `SandboxNetwork`, environments with their `${VAR}` templates expanded.
 *
 * Every error is a `HarborTaskError` (code `invalid_task`) whose message names the file and
 * the field, and says what to write instead.
 */
import { parse as parseToml, TomlError } from "smol-toml";
import type { z } from "zod";
import type { SandboxLimits, SandboxNetwork } from "../../sandbox/types.js";
import { expandEnvTemplates } from "./env-template.js";
import { HarborTaskError } from "./errors.js";
import { baselineNetwork, phaseNetwork } from "./network-policy.js";
import { taskConfigSchema, unknownFields, type HarborTaskConfig } from "./task-config-schema.js";

export type { HarborTaskConfig } from "./task-config-schema.js";

/** Tables of the file, written `[name]` in messages. */
const TABLES = new Set(["task", "metadata", "verifier", "agent", "environment", "solution", "steps"]);

/** A zod issue's path as a reader of task.toml would write it: `[environment].cpus`, `[task].authors[1].name`. */
export function fieldName(path: readonly PropertyKey[]): string {
  let out = "";
  path.forEach((segment, i) => {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (i === 0 && TABLES.has(String(segment))) out += `[${String(segment)}]`;
    else out += `${out ? "." : ""}${String(segment)}`;
  });
  return out || "(file)";
}

function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let value = raw;
  for (const segment of path) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<PropertyKey, unknown>)[segment];
  }
  return value;
}

function describe(value: unknown): string {
  if (value === undefined) return "";
  const text = value instanceof Date ? value.toISOString() : JSON.stringify(value);
  return text === undefined ? "" : ` (got ${text.length > 60 ? `${text.slice(0, 57)}...` : text})`;
}

function invalid(file: string, raw: unknown, issues: readonly z.core.$ZodIssue[]): HarborTaskError {
  const first = issues[0];
  const path = first?.path ?? [];
  const parts = issues.slice(0, 5).map((issue) => `${fieldName(issue.path)}: ${issue.message}${describe(valueAt(raw, issue.path))}`);
  const more = issues.length > 5 ? ` (and ${issues.length - 5} more)` : "";
  return new HarborTaskError(`${file}: ${parts.join("; ")}${more}`, file, fieldName(path));
}

function unsupported(file: string, field: string, why: string): HarborTaskError {
  return new HarborTaskError(`${file}: ${field} ${why}`, file, field);
}

/** Harbor features that would change what the task means if edgegym ignored them. */
function refuseUnsupported(config: HarborTaskConfig, file: string): void {
  if (config.steps != null) throw unsupported(file, "[[steps]]", "(a multi-step task) is not supported by edgegym: serve one task per directory");
  const { environment: env, verifier } = config;
  if (env.os !== "linux") throw unsupported(file, "[environment].os", `= "${env.os}" is not supported: edgegym runs Linux containers only`);
  if (env.gpus) throw unsupported(file, "[environment].gpus", `= ${env.gpus} is not supported: edgegym's sandboxes have no GPU`);
  if (env.gpu_types?.length) throw unsupported(file, "[environment].gpu_types", "is not supported: edgegym's sandboxes have no GPU");
  if (env.tpu != null) throw unsupported(file, "[environment].tpu", "is not supported: edgegym's sandboxes have no TPU");
  if (env.mcp_servers.length) throw unsupported(file, "[environment].mcp_servers", "is not supported: edgegym gives the agent its own tools, not a task's MCP servers");
  if (verifier.environment != null) {
    throw unsupported(file, "[verifier.environment]", 'is not supported: edgegym runs the verifier in the task\'s own image (drop the table, or use environment_mode = "separate")');
  }
  const continuous = verifier.continuous as { enabled?: unknown } | null | undefined;
  if (continuous && typeof continuous === "object" && continuous.enabled === true) throw unsupported(file, "[verifier.continuous]", "(verification while the agent works) is not supported");
  if (Array.isArray(verifier.collect) && verifier.collect.length) throw unsupported(file, "[[verifier.collect]]", "(collect hooks) is not supported");
}

/** The result of `parseTaskToml`: the config and what Harbor would ignore in it. */
export interface ParsedTaskToml {
  config: HarborTaskConfig;
  /** Keys Harbor 0.25 does not define, so ignores (`[environment].cpu`): likely typos. */
  warnings: string[];
}

/**
 * Parses task.toml's text. `file` names it in errors (the path the operator will look at).
 *
 * @example const { config } = parseTaskToml('[verifier]\ntimeout_sec = 120\n', "tasks/fix-median/task.toml");
 */
export function parseTaskToml(text: string, file = "task.toml"): ParsedTaskToml {
  let raw: Record<string, unknown>;
  try {
    raw = parseToml(text, { unsafeKeyBehaviour: "throw", maxDepth: 32 }) as Record<string, unknown>;
  } catch (err) {
    const detail = (err instanceof Error ? err.message : String(err)).split("\n")[0];
    const where = err instanceof TomlError ? ` at line ${err.line}, column ${err.column}` : "";
    throw new HarborTaskError(`${file}: not valid TOML${where}: ${detail}`, file);
  }
  // Harbor's legacy rename: a top-level `version` is the schema version unless both are given.
  if ("version" in raw) {
    const { version, ...rest } = raw;
    raw = "schema_version" in rest ? rest : { schema_version: version, ...rest };
  }
  const result = taskConfigSchema.safeParse(raw);
  if (!result.success) throw invalid(file, raw, result.error.issues);
  refuseUnsupported(result.data, file);
  const warnings = unknownFields(raw).map((field) => `${file}: ${field} is not a Harbor task.toml field; ignored`);
  if (result.data.environment.skills_dir != null) warnings.push(`${file}: [environment].skills_dir is ignored: edgegym's agents have no skills directory`);
  return { config: result.data, warnings };
}

/** `[environment].healthcheck`, in edgegym's units. */
export interface TaskHealthcheck {
  command: string;
  intervalSec: number;
  timeoutSec: number;
  startPeriodSec: number;
  startIntervalSec: number;
  retries: number;
}

/**
 * What the rest of edgegym needs to run one Harbor task, every default applied. Fields
 * Harbor leaves to the image are null (`workdir`, users); limits Harbor leaves to the
 * provider are absent (then the operator's defaults apply).
 */
export interface ResolvedTaskConfig {
  /** `[task].name` ("org/name"), else the directory's name. */
  name: string;
  description: string;
  /** instruction.md, trimmed: the agent's prompt (never copied into the box). */
  instruction: string;
  schemaVersion: string;
  /** Null: no limit (Harbor's default). */
  agentTimeoutSec: number | null;
  verifierTimeoutSec: number;
  /** Null: the image's USER. A numeric uid is kept as its decimal string. */
  verifierUser: string | null;
  agentUser: string | null;
  /** "separate": grade in a fresh container of the task's image, not the agent's. */
  verifierEnvironmentMode: "shared" | "separate";
  buildTimeoutSec: number;
  /** A prebuilt image instead of building environment/. */
  dockerImage: string | null;
  workdir: string | null;
  limits: Pick<SandboxLimits, "cpus" | "memoryMb" | "storageMb">;
  network: { agent: SandboxNetwork; verifier: SandboxNetwork };
  /** `[environment].env`: every exec in the box. */
  env: Record<string, string>;
  /** `[verifier].env`: test.sh only. */
  verifierEnv: Record<string, string>;
  /** `[solution].env`: solve.sh only. */
  solutionEnv: Record<string, string>;
  healthcheck: TaskHealthcheck | null;
  /** `[metadata]` as JSON (TOML dates as their text). */
  metadata: Record<string, unknown>;
}

export interface ResolveOptions {
  /** The task directory's name: the task's name when task.toml has no `[task]`. */
  dirName: string;
  /** instruction.md's text. */
  instruction: string;
  /**
   * Variables `${VAR}` templates may read. Default EMPTY: the server's own environment
   * holds its secrets and must never reach a container the agent controls; an operator
   * who wants a task to read a variable passes exactly that one.
   */
  hostEnv?: Readonly<Record<string, string>>;
  /** For messages. Default "task.toml". */
  file?: string;
}

/** TOML values as JSON: dates become their text, everything else is already JSON. */
function toJson(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(toJson);
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toJson(v)]));
  return value;
}

const userName = (user: string | number | null | undefined): string | null => (user == null ? null : String(user));

/**
 * The config as edgegym runs it.
 *
 * @example const task = resolveTaskConfig(config, { dirName: "fix-median", instruction: "Fix the median." });
 */
export function resolveTaskConfig(config: HarborTaskConfig, options: ResolveOptions): ResolvedTaskConfig {
  const file = options.file ?? "task.toml";
  const hostEnv = options.hostEnv ?? {};
  const { environment: env, agent, verifier } = config;
  const baseline = baselineNetwork(env);
  const limits: ResolvedTaskConfig["limits"] = {};
  if (env.cpus != null) limits.cpus = env.cpus;
  if (env.memory_mb != null) limits.memoryMb = env.memory_mb;
  if (env.storage_mb != null) limits.storageMb = env.storage_mb;
  const hc = env.healthcheck;
  return {
    name: config.task?.name ?? options.dirName,
    description: config.task?.description ?? "",
    instruction: options.instruction.trim(),
    schemaVersion: config.schema_version,
    agentTimeoutSec: agent.timeout_sec,
    verifierTimeoutSec: verifier.timeout_sec,
    verifierUser: userName(verifier.user),
    agentUser: userName(agent.user),
    verifierEnvironmentMode: verifier.environment_mode ?? "shared",
    buildTimeoutSec: env.build_timeout_sec,
    dockerImage: env.docker_image ?? null,
    workdir: env.workdir ?? null,
    limits,
    network: { agent: phaseNetwork(agent, baseline), verifier: phaseNetwork(verifier, baseline) },
    env: expandEnvTemplates(env.env, { hostEnv, file, table: "[environment].env" }),
    verifierEnv: expandEnvTemplates(verifier.env, { hostEnv, file, table: "[verifier].env" }),
    solutionEnv: expandEnvTemplates(config.solution.env, { hostEnv, file, table: "[solution].env" }),
    healthcheck: hc
      ? { command: hc.command, intervalSec: hc.interval_sec, timeoutSec: hc.timeout_sec, startPeriodSec: hc.start_period_sec, startIntervalSec: hc.start_interval_sec, retries: hc.retries }
      : null,
    metadata: toJson(config.metadata) as Record<string, unknown>,
  };
}

/** `parseTaskToml` then `resolveTaskConfig`: one task.toml to what edgegym runs. */
export function loadTaskConfig(text: string, options: ResolveOptions): { resolved: ResolvedTaskConfig; config: HarborTaskConfig; warnings: string[] } {
  const { config, warnings } = parseTaskToml(text, options.file);
  return { resolved: resolveTaskConfig(config, options), config, warnings };
}
