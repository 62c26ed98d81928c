import { z } from "zod";
import { UpstreamsConfig } from "./model-endpoint/upstreams.js";
import { MathDatasetConfig, mathDatasetConfigFromVar } from "../envs/builtin/math-dataset/index.js";
import { JudgesConfig } from "../envs/judges-config.js";
import type { ServerConfig } from "./context.js";
import { QUOTA_SETTINGS, QuotasFileSection } from "./tenants/quota-config.js";

/**
 * Every server setting, declared once: its variable, its key in the Node config file, its
 * flag, how a string value is parsed, its default and its doc. The readers (both runtimes'
 * variables, the Node config file, the CLI flags), the CLI's usage text and
 * docs/configuration.md are all made from this table, so a setting cannot be read in one
 * place and forgotten in another.
 */
export interface Setting<T = unknown> {
  variable: string;
  /** Key in the Node config file (`--config`); null when only the variable (or flag) sets it. */
  fileKey: string | null;
  /** The `edgegym serve` flag that sets it (flags win over variables); null for none. */
  flag: string | null;
  /** `both`: a Worker var too; `node`: only `edgegym serve` reads it; `worker`: only the Worker reads it. */
  runtimes: "both" | "node" | "worker";
  /** The default, as the docs show it. */
  default: string;
  /** What it does, for the usage text and docs/configuration.md (Markdown). */
  doc: string;
  /** A string value (variable or flag) as T; throws an Error that names the variable and says what it must be. */
  parse(raw: string): T;
  /** The config file's value; null when the file has no key for it. */
  file: z.ZodType<T> | null;
  /** Where the value goes in the app's config; absent for what the Node process itself reads (port, host, database, workers). */
  apply?(config: Partial<ServerConfig>, value: T): void;
  /** Variable and file both set: how the two combine. Default: the variable wins. */
  combine?(fromVariable: T, fromFile: T): T;
}

const setting = <T>(row: Setting<T>): Setting => row as Setting;
const typed = <T>(row: Setting<T>): Setting<T> => row;

function positiveInt(variable: string): (raw: string) => number {
  return (raw) => {
    const n = Number(raw);
    if (!Number.isInteger(n) || n <= 0) throw new Error(`${variable} must be a positive integer, got "${raw}"`);
    return n;
  };
}

function nonNegativeInt(variable: string, max: number): (raw: string) => number {
  return (raw) => {
    const n = /^\s*\d+\s*$/.test(raw) ? Number(raw) : NaN;
    if (!Number.isInteger(n) || n < 0 || n > max) throw new Error(`${variable} must be a whole number from 0 to ${max}, got "${raw}"`);
    return n;
  };
}

function oneOf<const T extends string>(variable: string, values: readonly T[]): (raw: string) => T {
  return (raw) => {
    if (!(values as readonly string[]).includes(raw)) throw new Error(`${variable} must be ${values.slice(0, -1).join(", ")} or ${values.at(-1)}, got "${raw}"`);
    return raw as T;
  };
}

function boolean(variable: string): (raw: string) => boolean {
  return (raw) => {
    if (raw === "1" || raw === "true") return true;
    if (raw === "0" || raw === "false") return false;
    throw new Error(`${variable} must be 1, true, 0 or false, got "${raw}"`);
  };
}

/** "sk-a, sk-b" → ["sk-a", "sk-b"], dropping blanks and repeats. */
export function parseApiKeys(raw: string | undefined): string[] {
  return [...new Set((raw ?? "").split(",").map((k) => k.trim()).filter(Boolean))];
}

const keys = (raw: string): string[] => parseApiKeys(raw);
const union = (a: string[], b: string[]): string[] => [...new Set([...a, ...b])];
const text = (raw: string): string => raw;
const positive = z.number().int().positive();

/** The settings of the app itself (src/server/context.ts), read from variables and the config file alike. */
export const APP_SETTINGS: readonly Setting[] = [
  setting({
    variable: "EDGEGYM_API_KEYS", fileKey: "api_keys", flag: null, runtimes: "both", default: "none",
    doc: "comma-separated keys; when set, every `/v1` route needs `Authorization: Bearer <key>` (`/health` stays open). Each key is a tenant: `name:key`, or a bare key (named `key_` + a hash prefix); a tenant sees only its own episodes and eval jobs ([security-tenants.md](security-tenants.md)). Keys from the variable and the file are both accepted",
    parse: keys, file: z.array(z.string().min(1)), combine: union,
    apply: (c, v) => { c.apiKeys = v; },
  }),
  setting({
    variable: "EDGEGYM_ADMIN_API_KEYS", fileKey: "admin_api_keys", flag: null, runtimes: "both", default: "none",
    doc: "keys (same syntax) that see every tenant's episodes and eval jobs; from the variable and the file both",
    parse: keys, file: z.array(z.string().min(1)), combine: union,
    apply: (c, v) => { if (v.length) c.adminApiKeys = v; },
  }),
  setting({
    variable: "EDGEGYM_TTL_SECONDS", fileKey: "default_ttl_seconds", flag: null, runtimes: "both", default: "3600",
    doc: "episode time to live after its last activity",
    parse: positiveInt("EDGEGYM_TTL_SECONDS"), file: positive, apply: (c, v) => { c.defaultTtlSeconds = v; },
  }),
  setting({
    variable: "EDGEGYM_MAX_TTL_SECONDS", fileKey: "max_ttl_seconds", flag: null, runtimes: "both", default: "604800",
    doc: "cap on a reset's `ttl_seconds`",
    parse: positiveInt("EDGEGYM_MAX_TTL_SECONDS"), file: positive, apply: (c, v) => { c.maxTtlSeconds = v; },
  }),
  setting({
    variable: "EDGEGYM_BODY_LIMIT_BYTES", fileKey: "body_limit_bytes", flag: null, runtimes: "both", default: "1048576",
    doc: "larger request bodies get `413`",
    parse: positiveInt("EDGEGYM_BODY_LIMIT_BYTES"), file: positive, apply: (c, v) => { c.bodyLimitBytes = v; },
  }),
  setting({
    variable: "EDGEGYM_ENV_VERSION_CHECK", fileKey: "env_version_check", flag: null, runtimes: "both", default: "strict",
    doc: "how episodes are held to the environment they started on: `strict` (same version and content hash), `version`, `off` ([versions.md](versions.md))",
    parse: oneOf("EDGEGYM_ENV_VERSION_CHECK", ["strict", "version", "off"] as const), file: z.enum(["strict", "version", "off"]),
    apply: (c, v) => { c.envVersionCheck = v; },
  }),
  setting({
    variable: "EDGEGYM_EVAL_RETENTION_DAYS", fileKey: "eval_retention_days", flag: null, runtimes: "both", default: "none (keep forever)",
    doc: "the reaper deletes ended evaluation jobs older than this, with their rollouts ([eval.md](eval.md))",
    parse: positiveInt("EDGEGYM_EVAL_RETENTION_DAYS"), file: positive, apply: (c, v) => { c.evalRetentionDays = v; },
  }),
  setting({
    variable: "EDGEGYM_EVAL_MAX_TOKENS", fileKey: "eval_max_tokens", flag: null, runtimes: "both", default: "4096",
    doc: "cap on `max_tokens` of server-run eval jobs; their `sampling_args` are allowlisted ([security-outbound.md](security-outbound.md))",
    parse: positiveInt("EDGEGYM_EVAL_MAX_TOKENS"), file: positive, apply: (c, v) => { c.evalMaxTokens = v; },
  }),
  setting({
    variable: "EDGEGYM_WS_MAX_IN_FLIGHT", fileKey: null, flag: null, runtimes: "both", default: "256",
    doc: "requests one `/v1/ws` socket may have running at once",
    parse: positiveInt("EDGEGYM_WS_MAX_IN_FLIGHT"), file: null, apply: (c, v) => { c.socketMaxInFlight = v; },
  }),
  setting({
    variable: "EDGEGYM_WS_MAX_SOCKETS", fileKey: null, flag: null, runtimes: "both", default: "4096",
    doc: "`/v1/ws` sockets one process or isolate holds at once",
    parse: positiveInt("EDGEGYM_WS_MAX_SOCKETS"), file: null, apply: (c, v) => { c.socketMaxOpen = v; },
  }),
  setting({
    variable: "EDGEGYM_WS_MAX_BUFFERED_BYTES", fileKey: null, flag: null, runtimes: "both", default: "1048576",
    doc: "reply bytes one socket may hold unsent; past it the socket stops reading its peer until half has drained (Node; a Worker's socket cannot tell, [websocket.md](websocket.md))",
    parse: positiveInt("EDGEGYM_WS_MAX_BUFFERED_BYTES"), file: null, apply: (c, v) => { c.socketMaxBufferedBytes = v; },
  }),
  setting({
    variable: "EDGEGYM_WS_DRAIN_TIMEOUT_SECONDS", fileKey: null, flag: null, runtimes: "both", default: "30",
    doc: "a socket whose output stays over that limit this long is dropped: its peer is not reading",
    parse: positiveInt("EDGEGYM_WS_DRAIN_TIMEOUT_SECONDS"), file: null, apply: (c, v) => { c.socketDrainTimeoutMs = v * 1000; },
  }),
  setting({
    variable: "EDGEGYM_OPENENV_WS_MAX_SOCKETS", fileKey: null, flag: null, runtimes: "both", default: "4096",
    doc: "`/openenv/{env}/ws` sockets one process or isolate holds at once (the per-tenant `sockets` quota counts both wires)",
    parse: positiveInt("EDGEGYM_OPENENV_WS_MAX_SOCKETS"), file: null, apply: (c, v) => { c.openEnvSocketMaxOpen = v; },
  }),
  setting({
    variable: "EDGEGYM_ALLOWED_ORIGINS", fileKey: "allowed_origins", flag: null, runtimes: "both", default: "none (the server's own origin only)",
    doc: "comma-separated origins (`https://app.example`) whose pages may open the server's WebSockets besides its own; `*` allows any. A socket upgrade with another `Origin` is 403 `origin_not_allowed` ([security.md](security.md))",
    parse: keys, file: z.array(z.string().min(1)), combine: union,
    apply: (c, v) => { c.allowedOrigins = v; },
  }),
  setting({
    variable: "EDGEGYM_ALLOWED_HOSTS", fileKey: "allowed_hosts", flag: null, runtimes: "both", default: "none (localhost, IP addresses and the bound name)",
    doc: "comma-separated host names a keyless server answers besides localhost, IP addresses and its `--host` (`.example.com` takes subdomains too; `*` turns the check off); any other `Host` is 403 `host_not_allowed`, which stops DNS rebinding. On a Worker the check runs only when this is set ([security.md](security.md))",
    parse: keys, file: z.array(z.string().min(1)), combine: union,
    apply: (c, v) => { c.allowedHosts = v; },
  }),
  setting({
    variable: "EDGEGYM_SANDBOX_MAX_LIVE", fileKey: "sandbox_max_live", flag: null, runtimes: "node", default: "64",
    doc: "containers of sandboxed episodes (`--env harbor:DIR`) alive at once, counted over every server on the same database and Docker host; past it a reset is `429` with `Retry-After` ([sandboxes.md](sandboxes.md))",
    parse: positiveInt("EDGEGYM_SANDBOX_MAX_LIVE"), file: positive, apply: (c, v) => { c.sandboxMaxLive = v; },
  }),
  setting({
    variable: "EDGEGYM_SANDBOX_WARM", fileKey: "sandbox_warm", flag: null, runtimes: "node", default: "0",
    doc: "containers kept started and unclaimed per task image, so a reset claims one instead of creating it (a reset then answers in tens of milliseconds); they count toward `EDGEGYM_SANDBOX_MAX_LIVE` and are removed when the server stops ([sandboxes.md](sandboxes.md#warm-pool))",
    parse: nonNegativeInt("EDGEGYM_SANDBOX_WARM", 64), file: z.number().int().min(0).max(64), apply: (c, v) => { c.sandboxWarm = v; },
  }),
  setting({
    variable: "EDGEGYM_SANDBOX_CREATES_PER_MINUTE", fileKey: "sandbox_creates_per_minute", flag: null, runtimes: "node", default: "120",
    doc: "containers one server process may create per minute (a token bucket, that many at once); past it a reset is `429` with `Retry-After`",
    parse: positiveInt("EDGEGYM_SANDBOX_CREATES_PER_MINUTE"), file: positive, apply: (c, v) => { c.sandboxCreatesPerMinute = v; },
  }),
  setting({
    variable: "EDGEGYM_SANDBOX_FORCE_NO_NETWORK", fileKey: "sandbox_force_no_network", flag: null, runtimes: "node", default: "false",
    doc: "run every sandbox with no network at all, whatever its task's `network_mode` says",
    parse: boolean("EDGEGYM_SANDBOX_FORCE_NO_NETWORK"), file: z.boolean(), apply: (c, v) => { c.sandboxForceNoNetwork = v; },
  }),
  setting({
    variable: "EDGEGYM_SANDBOX_EGRESS_PORT", fileKey: "sandbox_egress_port", flag: null, runtimes: "node", default: "3128",
    doc: "port of the egress proxy that `allowlist` sandboxes reach the hosts their task names through, on the egress network's gateway address ([sandbox-egress.md](sandbox-egress.md))",
    parse: (raw) => {
      const n = Number(raw);
      if (!/^\d+$/.test(raw) || n < 1 || n > 65535) throw new Error(`EDGEGYM_SANDBOX_EGRESS_PORT must be a port number (1 to 65535), got "${raw}"`);
      return n;
    },
    file: z.number().int().min(1).max(65535), apply: (c, v) => { c.sandboxEgressPort = v; },
  }),
  setting({
    variable: "EDGEGYM_SANDBOX_EGRESS_FIREWALL", fileKey: "sandbox_egress_firewall", flag: null, runtimes: "node", default: "iptables",
    doc: "who keeps `allowlist` sandboxes off the host's ports: `iptables` (the server installs the rules; needs root or CAP_NET_ADMIN, else such tasks are refused) or `external` (the operator did, [sandbox-egress.md](sandbox-egress.md))",
    parse: oneOf("EDGEGYM_SANDBOX_EGRESS_FIREWALL", ["iptables", "external"] as const), file: z.enum(["iptables", "external"]), apply: (c, v) => { c.sandboxEgressFirewall = v; },
  }),
  setting({
    variable: "EDGEGYM_SANDBOX_PIDS", fileKey: "sandbox_pids", flag: null, runtimes: "node", default: "512",
    doc: "processes one sandbox may run at once (a fork bomb stops there; Harbor tasks have no such field)",
    parse: positiveInt("EDGEGYM_SANDBOX_PIDS"), file: positive, apply: (c, v) => { c.sandboxPids = v; },
  }),
  setting({
    variable: "EDGEGYM_EVAL_BASE_URL", fileKey: "eval_base_url", flag: null, runtimes: "node", default: "none (evaluation jobs off)",
    doc: "OpenAI-compatible endpoint that evaluation jobs (`POST /v1/evals`) call; never sent to clients",
    parse: (raw) => {
      if (!z.url().safeParse(raw).success) throw new Error(`EDGEGYM_EVAL_BASE_URL must be a URL, got "${raw}"`);
      return raw;
    },
    file: z.url(), apply: (c, v) => { c.evalBaseUrl = v; },
  }),
  setting({
    variable: "EDGEGYM_EVAL_API_KEY", fileKey: "eval_api_key", flag: null, runtimes: "node", default: "none",
    doc: "its key; never sent to clients, never stored with a job",
    parse: text, file: z.string().min(1), apply: (c, v) => { c.evalApiKey = v; },
  }),
  setting({
    variable: "EDGEGYM_EVAL_MODEL", fileKey: "eval_model", flag: null, runtimes: "node", default: "none",
    doc: "model for evaluation jobs that name none",
    parse: text, file: z.string().min(1), apply: (c, v) => { c.evalModel = v; },
  }),
  setting({
    variable: "EDGEGYM_EVAL_MAX_CONCURRENT_REQUESTS", fileKey: "eval_max_concurrent_requests", flag: null, runtimes: "node", default: "64",
    doc: "model requests in flight across every evaluation job; a job asking past it gets `429`",
    parse: positiveInt("EDGEGYM_EVAL_MAX_CONCURRENT_REQUESTS"), file: positive, apply: (c, v) => { c.evalMaxConcurrentRequests = v; },
  }),
  setting({
    variable: "EDGEGYM_EVAL_LEASE_SECONDS", fileKey: null, flag: null, runtimes: "node", default: "30",
    doc: "how long a job's runner holds it between heartbeats; a crashed runner's job is taken over after this",
    parse: positiveInt("EDGEGYM_EVAL_LEASE_SECONDS"), file: null, apply: (c, v) => { c.evalLeaseMs = v * 1000; },
  }),
  setting({
    variable: "EDGEGYM_EVAL_MAX_ROLLOUTS", fileKey: "eval_max_rollouts", flag: null, runtimes: "node", default: "100000",
    doc: "most rollouts (`num_examples` × `rollouts_per_example`) one evaluation job may plan; past it `422 eval_too_large` ([security-bounds.md](security-bounds.md))",
    parse: positiveInt("EDGEGYM_EVAL_MAX_ROLLOUTS"), file: positive, apply: (c, v) => { c.evalMaxRollouts = v; },
  }),
  setting({
    variable: "EDGEGYM_PYTHON_ALLOW_WEAK_SANDBOX", fileKey: "python_allow_weak_sandbox", flag: "--allow-weak-python-sandbox", runtimes: "node", default: "off",
    doc: "serve `python` even where bubblewrap cannot isolate it (weak isolation); never on a server strangers reach ([security-python.md](security-python.md))",
    parse: boolean("EDGEGYM_PYTHON_ALLOW_WEAK_SANDBOX"), file: z.boolean(), apply: (c, v) => { c.pythonAllowWeakSandbox = v; },
  }),
  setting({
    variable: "EDGEGYM_PYTHON_WORKERS", fileKey: "python_workers", flag: null, runtimes: "node", default: "1",
    doc: "`python` jobs (code cells) run at once, each in a sandboxed interpreter process of its own; more wait their turn ([security-python.md](security-python.md#deploying))",
    parse: positiveInt("EDGEGYM_PYTHON_WORKERS"), file: positive, apply: (c, v) => { c.pythonWorkers = v; },
  }),
  setting({
    variable: "EDGEGYM_PYTHON_SPARES", fileKey: "python_spares", flag: null, runtimes: "node", default: "1",
    doc: "interpreter processes kept loaded and waiting for a `python` job (about 200 MB each), so a call does not wait for one to start; `0` starts each on demand",
    parse: nonNegativeInt("EDGEGYM_PYTHON_SPARES", 64), file: z.number().int().min(0).max(64), apply: (c, v) => { c.pythonSpares = v; },
  }),
  setting({
    variable: "EDGEGYM_SCORE_TIMEOUT_SECONDS", fileKey: "score_timeout_seconds", flag: null, runtimes: "node", default: "120",
    doc: "time one rollout's scoring may take for environments loaded from modules (`--env ./my-env.js`; a group scored together gets this per member). Their rubrics run in a worker thread per module, so a reward function that never returns holds that thread, never the server (`/health` keeps answering); past the budget the score is 0 with `score_timeout: …` on its components (trainers mask it) and a stuck thread is stopped. Built-ins bound their own calls; on a Worker, workerd's CPU limit per request applies instead ([authoring.md](authoring.md#time-budget))",
    parse: positiveInt("EDGEGYM_SCORE_TIMEOUT_SECONDS"), file: positive, apply: (c, v) => { c.scoreTimeoutMs = v * 1000; },
  }),
  setting({
    variable: "EDGEGYM_AGENT_MAX_CALLS", fileKey: "agent_max_calls", flag: null, runtimes: "node", default: "500",
    doc: "model calls one harness episode's agent may make (a reset's `agent.limits.max_calls` may ask for fewer); the call past it ends the episode with `call_limit` ([harnesses.md](harnesses.md))",
    parse: positiveInt("EDGEGYM_AGENT_MAX_CALLS"), file: positive, apply: (c, v) => { c.agentMaxCalls = v; },
  }),
  setting({
    variable: "EDGEGYM_AGENT_MAX_TOKENS", fileKey: "agent_max_tokens", flag: null, runtimes: "node", default: "20000000",
    doc: "prompt plus completion tokens over one harness episode's calls, as its upstream counts them; past it the episode ends with `token_limit`",
    parse: positiveInt("EDGEGYM_AGENT_MAX_TOKENS"), file: positive, apply: (c, v) => { c.agentMaxTokens = v; },
  }),
  setting({
    variable: "EDGEGYM_MODEL_CALL_TIMEOUT_SECONDS", fileKey: "model_call_timeout_seconds", flag: null, runtimes: "node", default: "600",
    doc: "longest one upstream call of a harness episode may take; past it the agent gets 504 (recorded as the call's error)",
    parse: positiveInt("EDGEGYM_MODEL_CALL_TIMEOUT_SECONDS"), file: positive, apply: (c, v) => { c.modelCallTimeoutMs = v * 1000; },
  }),
];

/**
 * Settings read by their own module (several variables make one value), listed here so
 * the config file, the usage text and the docs know them. Their parsers: quota-config.ts
 * and judges-config.ts, called from `serverConfigFromVars`.
 */
export const COMPOSITE_SETTINGS: readonly Setting[] = [
  ...QUOTA_SETTINGS.map(([variable, fileKey]) =>
    setting({ variable, fileKey: null, flag: null, runtimes: "both", default: "on", doc: `per-tenant quota (config file: \`quotas.${fileKey}\`): a positive integer or \`off\`; defaults and what it bounds in [security-tenants.md](security-tenants.md)`, parse: text, file: null }),
  ),
  setting<unknown>({ variable: "(config file only)", fileKey: "quotas", flag: null, runtimes: "both", default: "on", doc: "the quotas above as one object, e.g. `{\"open_episodes\": 500, \"event_streams\": \"off\"}`", parse: text, file: QuotasFileSection }),
  setting<unknown>({ variable: "EDGEGYM_JUDGES", fileKey: "judges", flag: null, runtimes: "both", default: "none", doc: "the LLM judges judge-qa may call, by name, as JSON; clients pick one by name ([security-outbound.md](security-outbound.md))", parse: text, file: JudgesConfig }),
  setting<unknown>({ variable: "EDGEGYM_MODEL_UPSTREAMS", fileKey: "model_upstreams", flag: null, runtimes: "node", default: "none", doc: "the model servers harness episodes' agents are proxied to, by name, as JSON: `{\"vllm\": {\"base_url\": \"http://127.0.0.1:8000/v1\", \"vllm\": true, \"api_key_env\": \"VLLM_KEY\"}}` (`vllm`: it returns token ids); a reset's `agent.upstream` picks one ([harnesses.md](harnesses.md))", parse: text, file: UpstreamsConfig }),
  setting({ variable: "EDGEGYM_DEFAULT_JUDGE", fileKey: "default_judge", flag: null, runtimes: "both", default: "the only judge", doc: "the judge used when a client names none", parse: text, file: z.string().min(1) }),
  setting({ variable: "EDGEGYM_JUDGE_BASE_URL", fileKey: null, flag: null, runtimes: "both", default: "none", doc: "with `EDGEGYM_JUDGE_MODEL` (comma-separated) and `EDGEGYM_JUDGE_API_KEY`: a judge named `default`", parse: text, file: null }),
  setting({ variable: "EDGEGYM_JUDGE_MODEL", fileKey: null, flag: null, runtimes: "both", default: "none", doc: "the default judge's models", parse: text, file: null }),
  setting({ variable: "EDGEGYM_JUDGE_API_KEY", fileKey: null, flag: null, runtimes: "both", default: "none", doc: "the default judge's key", parse: text, file: null }),
  setting({
    variable: "EDGEGYM_MATH_DATASET", fileKey: "math_dataset", flag: null, runtimes: "both", default: "none (not served)",
    doc: "the `math-dataset` environment's data: a JSONL/Parquet URL (a path too on Node), or its settings as JSON (`{\"source\": …}`)",
    parse: (raw) => mathDatasetConfigFromVar(raw) as MathDatasetConfig,
    file: MathDatasetConfig,
  }),
];

/** A set variable's value: undefined when unset or empty (an empty Worker var means unset). */
export function variableValue(vars: Readonly<Record<string, unknown>>, name: string): string | undefined {
  const raw = vars[name];
  return typeof raw === "string" && raw.trim() !== "" ? raw.trim() : undefined;
}

/** One setting's value from a variable and the config file (parsed, combined), or undefined when neither sets it. */
export function settingValue<T>(row: Setting<T>, vars: Readonly<Record<string, unknown>>, file: Readonly<Record<string, unknown>>): T | undefined {
  const raw = variableValue(vars, row.variable);
  const fromVariable = raw === undefined ? undefined : row.parse(raw);
  const fromFile = row.fileKey === null ? undefined : (file[row.fileKey] as T | undefined);
  if (fromVariable !== undefined && fromFile !== undefined) return row.combine ? row.combine(fromVariable, fromFile) : fromVariable;
  return fromVariable ?? fromFile;
}

/** "auto" (one per core) or a positive count. */
export type WorkerCount = number | "auto";

/** What the `edgegym serve` process itself reads (not the app): where to listen, the database, the processes. */
export const PROCESS_SETTINGS = {
  port: typed({
    variable: "PORT", fileKey: null, flag: "--port", runtimes: "node", default: "8787", doc: "port to listen on",
    parse: (raw) => {
      const n = Number(raw);
      if (!/^\d+$/.test(raw) || n > 65535) throw new Error(`--port / PORT must be a port number (0 to 65535), got "${raw}"`);
      return n;
    },
    file: null,
  }),
  host: typed({ variable: "HOST", fileKey: null, flag: "--host", runtimes: "node", default: "127.0.0.1", doc: "address to bind (`0.0.0.0` to serve a network)", parse: text, file: null }),
  db: typed({ variable: "EDGEGYM_DB", fileKey: null, flag: "--db", runtimes: "node", default: ".edgegym/edgegym.db", doc: "SQLite file, `:memory:`, or a `postgres://user:password@host:port/db` URL to run on PostgreSQL, shared by any number of server processes ([scaling.md](scaling.md))", parse: text, file: null }),
  synchronous: typed<"NORMAL" | "FULL">({
    variable: "EDGEGYM_SQLITE_SYNCHRONOUS", fileKey: null, flag: null, runtimes: "node", default: "NORMAL",
    doc: "SQLite durability: `NORMAL` survives a process crash, `FULL` fsyncs every commit and survives power loss too ([performance.md](performance.md))",
    parse: (raw) => {
      const upper = raw.toUpperCase();
      if (upper === "NORMAL" || upper === "FULL") return upper;
      throw new Error(`EDGEGYM_SQLITE_SYNCHRONOUS must be NORMAL or FULL, got "${raw}"`);
    },
    file: null,
  }),
  pgPoolSize: typed({
    variable: "EDGEGYM_PG_POOL_SIZE", fileKey: null, flag: null, runtimes: "node", default: "10",
    doc: "PostgreSQL connections each server process keeps (with a `postgres://` database): size the server's `max_connections` for this × processes ([scaling.md](scaling.md))",
    parse: (raw) => {
      const n = positiveInt("EDGEGYM_PG_POOL_SIZE")(raw);
      if (n > 1000) throw new Error(`EDGEGYM_PG_POOL_SIZE must be at most 1000, got ${n}`);
      return n;
    },
    file: null,
  }),
  config: typed({ variable: "EDGEGYM_CONFIG", fileKey: null, flag: "--config", runtimes: "node", default: "none", doc: "JSON config file: every setting below with a config key", parse: text, file: null }),
  workers: typed<WorkerCount>({
    variable: "EDGEGYM_WORKERS", fileKey: null, flag: "--workers", runtimes: "node", default: "1",
    doc: "server processes sharing the port and the SQLite file (`auto` = one per core)",
    parse: (raw) => {
      if (raw === "auto") return "auto";
      const n = Number(raw);
      if (!Number.isInteger(n) || n < 1) throw new Error(`--workers / EDGEGYM_WORKERS must be a positive integer or "auto", got "${raw}"`);
      return n;
    },
    file: null,
  }),
  reapIntervalSeconds: typed({
    variable: "EDGEGYM_REAP_INTERVAL_SECONDS", fileKey: null, flag: null, runtimes: "node", default: "60",
    doc: "how often expired episodes (and old eval jobs) are reaped; `0` turns the reaper off; on a Worker the cron trigger does it",
    parse: (raw) => {
      const n = Number(raw);
      if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n)) throw new Error(`EDGEGYM_REAP_INTERVAL_SECONDS must be a whole number of seconds (0 turns the reaper off), got "${raw}"`);
      return n;
    },
    file: null,
  }),
  envs: typed<string[]>({
    variable: "(flag and config file)", fileKey: "envs", flag: "--env", runtimes: "node", default: "none",
    doc: "environments beside the built-ins, repeatable: a module (a path or an installed package), or `harbor:DIR`, a directory of Harbor task directories served as `harbor` on Docker ([sandboxes.md](sandboxes.md)). In the config file a list, e.g. `[\"harbor:./tasks\", \"./my-env.js\"]`, whose relative paths are resolved against the file's directory; `--env` flags replace it. `edgegym eval` reads it too",
    parse: (raw) => [raw],
    file: z.array(z.string().min(1)),
  }),
} as const;

/** Every setting, in the order the usage text and the docs list them. */
/** What only the Worker entry reads (src/server/worker/worker.ts), not part of the app's config. */
export const WORKER_SETTINGS = {
  episodeStore: typed({
    variable: "EDGEGYM_EPISODE_STORE", fileKey: null, flag: null, runtimes: "worker", default: "d1",
    doc: "where the Worker keeps episodes: `d1` (one D1 database), or `durable-objects` (one SQLite-backed Durable Object per episode; [worker.md](worker.md#durable-objects))",
    parse: oneOf("EDGEGYM_EPISODE_STORE", ["d1", "durable-objects"] as const), file: null,
  }),
};

export const ALL_SETTINGS: readonly Setting[] = [...(Object.values(PROCESS_SETTINGS) as Setting[]), ...APP_SETTINGS, ...COMPOSITE_SETTINGS, ...(Object.values(WORKER_SETTINGS) as Setting[])];
