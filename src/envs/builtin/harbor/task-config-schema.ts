/**
 * task.toml as Harbor 0.25 reads it (`models/task/config.py`, schema_version "1.4"), in
 * zod: every field Harbor knows, with Harbor's defaults, so a task that runs under
 * `harbor run` parses here the same way.
 *
 * Unknown keys: Harbor's pydantic models ignore them (no `extra="forbid"` anywhere), and
 * a task written for a newer Harbor carries fields this one does not know. So the section
 * schemas strip unknown keys, as Harbor does, and `unknownFields` names them for the
 * loader's warnings — a typo (`timeout_secs`) is reported, not silently obeyed or fatal.
 * Known fields are checked more strictly than pydantic's coercion where a loose value would
 * be a hazard: timeouts must be positive, resource sizes positive integers, booleans real
 * booleans.
 */
import { z } from "zod";
import { normalizeAllowedHosts } from "./network-policy.js";

/** Harbor's `ORG_NAME_PATTERN` for `[task].name` ("org/name"), plus its no-".." rule. */
const ORG_NAME = /^[a-zA-Z0-9][a-zA-Z0-9._-]*\/[a-zA-Z0-9][a-zA-Z0-9._-]*$/;

const positiveSeconds = z.number({ error: "expected a number of seconds" }).positive({ error: "must be > 0 seconds" });
const positiveInt = (unit: string) => z.number({ error: `expected a whole number of ${unit}` }).int({ error: `expected a whole number of ${unit}` }).positive({ error: `must be at least 1 ${unit}` });
/** Harbor's `str | int | None`: a user name or a uid. */
const user = z.union([z.string().min(1), z.number().int().nonnegative()], { error: "expected a user name or a numeric uid" }).nullish();
const envTable = z.record(z.string(), z.string({ error: "environment values must be strings" }), { error: "expected a table of NAME = \"value\"" });

const allowedHosts = z
  .array(z.string(), { error: "expected a list of host names" })
  .transform((hosts, ctx) => {
    const result = normalizeAllowedHosts(hosts);
    if ("error" in result) {
      ctx.addIssue({ code: "custom", message: result.error, input: hosts });
      return z.NEVER;
    }
    return result.hosts;
  })
  .nullish();

const networkFields = {
  network_mode: z.enum(["public", "no-network", "allowlist"], { error: 'expected "public", "no-network" or "allowlist"' }).nullish(),
  allowed_hosts: allowedHosts,
};

/** Harbor: `allowed_hosts` is only valid with `network_mode = "allowlist"`. */
function checkAllowlist(value: { network_mode?: string | null; allowed_hosts?: string[] | null }, ctx: z.RefinementCtx): void {
  if (value.allowed_hosts != null && value.network_mode !== "allowlist") {
    ctx.addIssue({ code: "custom", path: ["allowed_hosts"], message: 'only valid with network_mode = "allowlist"', input: value.allowed_hosts });
  }
}

export const authorSchema = z.object({ name: z.string(), email: z.string().nullish() });

/** `[task]`: the package's identity; its `name` is the task's name. */
export const taskTableSchema = z.object({
  name: z
    .string({ error: "expected a string \"org/name\"" })
    .regex(ORG_NAME, { error: "must be \"org/name\": letters, digits, '.', '_' and '-', each part starting with a letter or digit" })
    .refine((name) => !name.includes(".."), { error: "must not contain \"..\"" }),
  version: z.string().min(1).nullish(),
  description: z.string().default(""),
  authors: z.array(authorSchema).default([]),
  keywords: z.array(z.string()).default([]),
});

/** `[environment].healthcheck`: Docker HEALTHCHECK's options, run before the agent starts. */
export const healthcheckSchema = z.object({
  command: z.string({ error: "expected the shell command to run" }).min(1),
  interval_sec: positiveSeconds.default(5),
  timeout_sec: positiveSeconds.default(30),
  start_period_sec: z.number().nonnegative().default(0),
  start_interval_sec: positiveSeconds.default(5),
  retries: positiveInt("retries").default(3),
});

/** `[agent]`: its time limit (none by default), user and network override. */
export const agentFieldsSchema = z.object({
  timeout_sec: positiveSeconds.nullish().transform((v) => v ?? null),
  user,
  ...networkFields,
});

/** `[verifier]`: test.sh's time limit (600 s), environment, user, box, network override. */
export const verifierFieldsSchema = z.object({
  timeout_sec: positiveSeconds.default(600),
  env: envTable.default({}),
  user,
  environment_mode: z.enum(["shared", "separate"], { error: 'expected "shared" or "separate"' }).nullish(),
  /** A separate verifier box of its own definition: refused by the loader (unsupported). */
  environment: z.unknown().optional(),
  /** Verification while the agent works: refused by the loader when enabled. */
  continuous: z.unknown().optional(),
  /** Collect hooks after the agent phase: refused by the loader when any. */
  collect: z.unknown().optional(),
  ...networkFields,
});

/** `[environment]`: the box (built from environment/Dockerfile or `docker_image`). */
export const environmentFieldsSchema = z.object({
  build_timeout_sec: positiveSeconds.default(600),
  docker_image: z.string().min(1).nullish(),
  os: z
    .string()
    .transform((v) => v.toLowerCase())
    .pipe(z.enum(["linux", "windows"], { error: 'expected "linux" or "windows"' }))
    .default("linux"),
  cpus: positiveInt("CPUs").nullish(),
  memory_mb: positiveInt("MB").nullish(),
  storage_mb: positiveInt("MB").nullish(),
  gpus: z.number().int().nonnegative().nullish(),
  gpu_types: z.array(z.string()).nullish(),
  tpu: z.unknown().optional(),
  mcp_servers: z.array(z.unknown()).default([]),
  env: envTable.default({}),
  skills_dir: z.string().nullish(),
  healthcheck: healthcheckSchema.nullish(),
  workdir: z.string().min(1).nullish(),
  /** Deprecated: false means "no-network" when `network_mode` and `allowed_hosts` are unset. */
  allow_internet: z.boolean({ error: "expected true or false" }).nullish(),
  /** Deprecated: "1G", "512M", "4096K", mapped to `memory_mb`. */
  memory: z.string({ error: 'expected a size such as "1G" or "512M"' }).optional(),
  /** Deprecated: as `memory`, mapped to `storage_mb`. */
  storage: z.string({ error: 'expected a size such as "10G" or "512M"' }).optional(),
  ...networkFields,
});

/** `[solution]`: the oracle's environment. */
export const solutionFieldsSchema = z.object({ env: envTable.default({}) });

/** Harbor's `_parse_size_to_mb`: G = 1024 MB, M = 1 MB, K = 1/1024 MB, truncated. */
export function parseSizeToMb(size: string): number | null {
  const match = /^([0-9]*\.?[0-9]+)([GMK])$/.exec(size.trim().toUpperCase());
  if (!match) return null;
  const value = Number(match[1]);
  const mb = match[2] === "G" ? value * 1024 : match[2] === "M" ? value : value / 1024;
  return Math.trunc(mb);
}

/** Maps a deprecated size onto its `_mb` field, refusing a conflict as Harbor does. */
function migrateSize(env: z.output<typeof environmentFieldsSchema>, ctx: z.RefinementCtx, legacy: "memory" | "storage"): void {
  const text = env[legacy];
  if (text === undefined) return;
  const target = legacy === "memory" ? "memory_mb" : "storage_mb";
  const mb = parseSizeToMb(text);
  if (mb === null || mb < 1) {
    ctx.addIssue({ code: "custom", path: [legacy], message: `"${text}" is not a size such as "1G", "512M" or "4096K" (deprecated: use ${target})`, input: text });
    return;
  }
  const given = env[target];
  if (given != null && given !== mb) {
    ctx.addIssue({ code: "custom", path: [legacy], message: `conflicts with ${target} = ${given}: "${text}" is ${mb} MB`, input: text });
    return;
  }
  env[target] = mb;
}

export const environmentSchema = environmentFieldsSchema
  .superRefine(checkAllowlist)
  .transform((env, ctx) => {
    migrateSize(env, ctx, "memory");
    migrateSize(env, ctx, "storage");
    const { memory: _memory, storage: _storage, ...rest } = env;
    return rest;
  });

export const agentSchema = agentFieldsSchema.superRefine(checkAllowlist);
export const verifierSchema = verifierFieldsSchema.superRefine(checkAllowlist);

/** The whole file, after the loader moved a legacy top-level `version` to `schema_version`. */
export const taskConfigSchema = z.object({
  schema_version: z.string({ error: 'expected a string such as "1.4"' }).default("1.4"),
  task: taskTableSchema.nullish(),
  metadata: z.record(z.string(), z.unknown(), { error: "expected a table" }).default({}),
  verifier: verifierSchema.prefault({}),
  agent: agentSchema.prefault({}),
  environment: environmentSchema.prefault({}),
  solution: solutionFieldsSchema.prefault({}),
  source: z.string().nullish(),
  /** Multi-step tasks: refused by the loader (unsupported). */
  steps: z.unknown().optional(),
  multi_step_reward_strategy: z.unknown().optional(),
  /** Files Harbor collects after a trial: logs only, never part of a reward; ignored. */
  artifacts: z.unknown().optional(),
});

/** A parsed task.toml with Harbor's defaults filled in. */
export type HarborTaskConfig = z.output<typeof taskConfigSchema>;

/** Known keys per section, for `unknownFields`. */
const SECTIONS: Record<string, readonly string[]> = {
  task: Object.keys(taskTableSchema.shape),
  agent: Object.keys(agentFieldsSchema.shape),
  verifier: Object.keys(verifierFieldsSchema.shape),
  environment: Object.keys(environmentFieldsSchema.shape),
  solution: Object.keys(solutionFieldsSchema.shape),
};
const TOP_LEVEL = [...Object.keys(taskConfigSchema.shape), "version"];

/**
 * Keys of the raw TOML that Harbor 0.25 does not define (and so ignores), as
 * `[section].key` or a top-level `key`. `[metadata]` is free-form and never reported.
 */
export function unknownFields(raw: Readonly<Record<string, unknown>>): string[] {
  const found: string[] = [];
  for (const [key, value] of Object.entries(raw)) {
    if (!TOP_LEVEL.includes(key)) {
      found.push(key);
      continue;
    }
    const known = SECTIONS[key];
    if (!known || value === null || typeof value !== "object" || Array.isArray(value)) continue;
    for (const field of Object.keys(value)) if (!known.includes(field)) found.push(`[${key}].${field}`);
    const healthcheck = key === "environment" ? (value as Record<string, unknown>).healthcheck : undefined;
    if (healthcheck && typeof healthcheck === "object" && !Array.isArray(healthcheck)) {
      for (const field of Object.keys(healthcheck)) if (!Object.hasOwn(healthcheckSchema.shape, field)) found.push(`[environment.healthcheck].${field}`);
    }
  }
  return found;
}
