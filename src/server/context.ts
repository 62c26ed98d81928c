import type { UpgradeWebSocket } from "hono/ws";
import type { UpstreamPost } from "./model-endpoint/model-calls.js";
import { EMPTY_UPSTREAMS, type UpstreamCatalog } from "./model-endpoint/upstreams.js";
import type { EnvRegistry, EnvVersionCheck } from "../envs/index.js";
import { EMPTY_JUDGE_CATALOG, type JudgeCatalog } from "../envs/judges.js";
import type { ChatModel } from "../eval/model.js";
import type { EvalRequest } from "../protocol/index.js";
import type { EdgegymDb } from "./db/database.js";
import type { Stores } from "./db/stores.js";
import type { Tenant } from "./tenants/keys.js";
import { DEFAULT_QUOTAS, type TenantQuotas } from "./tenants/quotas.js";
import type { SocketFlow } from "./sockets/socket-flow.js";
import type { StaticAssets } from "./console/static-assets.js";
import { EDGEGYM_VERSION } from "../version.js";

export interface ServerConfig {
  /** Bearer keys accepted on /v1, each `name:key` or a bare key (named `key_<hash prefix>`); empty (and no admin keys) = open. */
  apiKeys: string[];
  /** Keys that see every tenant's episodes and eval jobs (same entry syntax); their own quotas still apply. */
  adminApiKeys: string[];
  /** Per-tenant quotas (src/server/tenants/quotas.ts); null fields are off. */
  quotas: TenantQuotas;
  /** Largest accepted request body. */
  bodyLimitBytes: number;
  defaultTtlSeconds: number;
  maxTtlSeconds: number;
  /** Shown by /health. */
  version: string;
  /** OpenAI-compatible endpoint evaluation jobs call; null turns `POST /v1/evals` off (503). Never sent to clients. */
  evalBaseUrl: string | null;
  /** Its key; never sent to clients, never stored with a job. */
  evalApiKey: string | null;
  /** Model name for jobs that do not name one. */
  evalModel: string | null;
  /** Model requests in flight across every evaluation job; a job asking past it gets 429. */
  evalMaxConcurrentRequests: number;
  /** Retry-After of that 429. */
  evalRetryAfterSeconds: number;
  /** How long a job's runner holds it between heartbeats; a crashed runner's job is taken over after this. */
  evalLeaseMs: number;
  /** Ended jobs (and their rollouts) older than this many days (by finished_at) are deleted by the reaper; null keeps them forever. */
  evalRetentionDays: number | null;
  /** Largest max_tokens a server-run eval job may ask for (also sent when it names none); `n` is always 1. See docs/security-outbound.md. */
  evalMaxTokens: number;
  /** The LLM judges environments may call (judge-qa), by name; their URLs and keys are never sent to clients. */
  judges: JudgeCatalog;
  /**
   * Rollouts one evaluation job may plan (num_examples × rollouts_per_example). A job
   * past it is refused with 422 `eval_too_large` before anything is stored, and one stored
   * past it by an older server fails on resume instead of building its plan.
   */
  evalMaxRollouts: number;
  /** Serve the python environment even where only weak isolation is possible (no working bubblewrap). */
  pythonAllowWeakSandbox: boolean;
  /** `python` jobs run at once, one interpreter process each (Node). */
  pythonWorkers: number;
  /** Interpreter processes kept loaded and waiting for a `python` job (Node). */
  pythonSpares: number;
  /** Most time one rollout's scoring may take for environments loaded from modules, which score in a thread that can be stopped (Node; src/server/node/scoring-threads.ts). */
  scoreTimeoutMs: number;
  /**
   * How episodes are held to the environment they started on (docs/versions.md): `strict`
   * (same version and content hash), `version` (same version), `off`. Default strict.
   */
  envVersionCheck: EnvVersionCheck;
  /** Requests one `/v1/ws` socket may have running at once; past it a frame is answered 429 `rate_limited` (docs/websocket.md). */
  socketMaxInFlight: number;
  /** `/v1/ws` sockets one process (or Worker isolate) holds at once; past it an upgrade is 503 with Retry-After. */
  socketMaxOpen: number;
  /** Reply bytes one socket (either wire) may hold unsent before it stops reading its peer (src/server/sockets/message-socket.ts). */
  socketMaxBufferedBytes: number;
  /** A socket over that limit this long is dropped. */
  socketDrainTimeoutMs: number;
  /** `/openenv/{env}/ws` sockets one process (or isolate) holds at once. */
  openEnvSocketMaxOpen: number;
  /** Origins besides the server's own whose pages may open its sockets; `*` for any (src/server/middleware/origin-check.ts). */
  allowedOrigins: string[];
  /** Host names a keyless server answers besides localhost, IP literals and `boundHost`; `*` turns the check off. */
  allowedHosts: string[];
  /**
   * The address the Node server listens on (`--host`), set by the Node entry: a keyless
   * server then refuses other `Host` names (DNS rebinding). Null (a Worker, a test app):
   * the Host check runs only when `allowedHosts` is set.
   */
  boundHost: string | null;
  /** Live sandboxes (containers) of this server's database at once; past it a reset of a sandboxed environment is 429 (docs/sandboxes.md). */
  sandboxMaxLive: number;
  /** Containers one process may create per minute (a token bucket of that size). */
  sandboxCreatesPerMinute: number;
  /** Started, unclaimed containers kept per task image for resets to claim (0: none). */
  sandboxWarm: number;
  /** Every sandbox runs with no network, whatever its task asks. */
  sandboxForceNoNetwork: boolean;
  /** Processes one sandbox may run at once (Harbor tasks set none). */
  sandboxPids: number;
  /** Port of the egress proxy of `allowlist` sandboxes. */
  sandboxEgressPort: number;
  /** Who filters the host's ports from the egress network: the server (`iptables`) or the operator (`external`). */
  sandboxEgressFirewall: "iptables" | "external";
  /** Model upstreams harness episodes may call, by name (src/server/model-endpoint/upstreams.ts); their URLs and keys never reach a client or a container. */
  modelUpstreams: UpstreamCatalog;
  /** A harness episode's model calls, unless its reset asks for fewer. */
  agentMaxCalls: number;
  /** A harness episode's prompt plus completion tokens, unless its reset asks for fewer. */
  agentMaxTokens: number;
  /** Longest one upstream call may take before the agent gets a 504. */
  modelCallTimeoutMs: number;
  /** Largest body the agent may send to its model endpoint (a long conversation with tool output). */
  modelRequestMaxBytes: number;
}

export const DEFAULT_CONFIG: ServerConfig = {
  apiKeys: [],
  adminApiKeys: [],
  quotas: DEFAULT_QUOTAS,
  bodyLimitBytes: 1024 * 1024,
  defaultTtlSeconds: 3600,
  maxTtlSeconds: 7 * 24 * 3600,
  version: EDGEGYM_VERSION,
  evalBaseUrl: null,
  evalApiKey: null,
  evalModel: null,
  evalMaxConcurrentRequests: 64,
  evalRetryAfterSeconds: 10,
  evalLeaseMs: 30_000,
  evalRetentionDays: null,
  evalMaxTokens: 4096,
  judges: EMPTY_JUDGE_CATALOG,
  evalMaxRollouts: 100_000,
  pythonAllowWeakSandbox: false,
  pythonWorkers: 1,
  pythonSpares: 1,
  scoreTimeoutMs: 120_000,
  envVersionCheck: "strict",
  socketMaxInFlight: 256,
  socketMaxOpen: 4096,
  socketMaxBufferedBytes: 1024 * 1024,
  socketDrainTimeoutMs: 30_000,
  openEnvSocketMaxOpen: 4096,
  allowedOrigins: [],
  allowedHosts: [],
  boundHost: null,
  sandboxMaxLive: 64,
  sandboxCreatesPerMinute: 120,
  sandboxWarm: 0,
  sandboxForceNoNetwork: false,
  sandboxPids: 512,
  sandboxEgressPort: 3128,
  sandboxEgressFirewall: "iptables",
  modelUpstreams: EMPTY_UPSTREAMS,
  agentMaxCalls: 500,
  agentMaxTokens: 20_000_000,
  modelCallTimeoutMs: 600_000,
  modelRequestMaxBytes: 16 * 1024 * 1024,
};

/** Everything the app needs, injected so tests and both runtimes build it the same way. */
export interface AppDeps {
  /** The SQLite database (better-sqlite3 or D1) the stores default to; unused when `stores` is given. */
  db?: EdgegymDb;
  /** The episode and eval stores; default: both on `db` (SQLite: better-sqlite3 or D1). One of the two is needed. */
  stores?: Stores;
  registry: EnvRegistry;
  config?: Partial<ServerConfig>;
  /** Milliseconds since the epoch; tests move time forward through it. */
  clock?: () => number;
  /** The model evaluation jobs call; default: the openai client against `config.evalBaseUrl`. */
  evalModel?: (request: EvalRequest & { model: string }) => ChatModel;
  /** The runtime's WebSocket upgrade (`@hono/node-server` on Node, `hono/cloudflare-workers` on Workers); without it socket routes answer 503. */
  upgradeWebSocket?: UpgradeWebSocket;
  /** What the runtime's sockets tell of their output (`ws` on Node); without it socket output is not metered. */
  socketFlow?: SocketFlow;
  /** How the model endpoint posts to its upstreams (Node: node:http with keep-alive); default fetch. */
  upstreamPost?: UpstreamPost;
  /** Starts a harness episode's agent once its reset is stored (Node: the agent runner, src/server/node/agent-runner.ts). */
  agents?: (episodeId: string, key: string) => Promise<void>;
  /** The web console's built files (`/ui`, `/docs`): from disk on Node, the ASSETS binding on Workers; without them those pages answer 404. */
  assets?: StaticAssets;
}

export interface AppEnv {
  Variables: { requestId: string; tenant: Tenant };
}
