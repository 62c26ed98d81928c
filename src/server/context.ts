import type { EnvRegistry } from "../envs/index.js";
import type { EdgegymDb } from "./db/database.js";

export interface ServerConfig {
  /** Bearer keys accepted on /v1; empty = open. */
  apiKeys: string[];
  /** Largest accepted request body. */
  bodyLimitBytes: number;
  defaultTtlSeconds: number;
  maxTtlSeconds: number;
  /** Shown by /health. */
  version: string;
}

export const DEFAULT_CONFIG: ServerConfig = {
  apiKeys: [],
  bodyLimitBytes: 1024 * 1024,
  defaultTtlSeconds: 3600,
  maxTtlSeconds: 7 * 24 * 3600,
  version: "0.1.0",
};

/** Everything the app needs, injected so tests and both runtimes build it the same way. */
export interface AppDeps {
  db: EdgegymDb;
  registry: EnvRegistry;
  config?: Partial<ServerConfig>;
  /** Milliseconds since the epoch; tests move time forward through it. */
  clock?: () => number;
}

export interface AppEnv {
  Variables: { requestId: string };
}
