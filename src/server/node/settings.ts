import { availableParallelism } from "node:os";
import { PROCESS_SETTINGS, variableValue, type Setting } from "../settings.js";

/** What `edgegym serve` reads for itself, from its flags, then its variables, then the table's defaults. */
export interface ServeSettings {
  port: number;
  host: string;
  dbPath: string;
  synchronous: "NORMAL" | "FULL";
  /** Connections per process when dbPath is a postgres:// URL. */
  pgPoolSize: number;
  configPath: string | undefined;
  workers: number;
  reapIntervalMs: number;
}

/** A flag's value, else the variable's, parsed by the table; undefined when neither is set. */
function read<T>(row: Setting<T>, flag: string | undefined, env: NodeJS.ProcessEnv): T | undefined {
  const raw = flag ?? variableValue(env, row.variable);
  return raw === undefined ? undefined : row.parse(raw);
}

/** Flags win over variables; a value that does not parse stops the server with the setting's name. */
export function readServeSettings(flags: { port?: string | undefined; host?: string | undefined; db?: string | undefined; config?: string | undefined; workers?: string | undefined }, env: NodeJS.ProcessEnv): ServeSettings {
  const s = PROCESS_SETTINGS;
  const workers = read(s.workers, flags.workers, env) ?? 1;
  return {
    port: read(s.port, flags.port, env) ?? Number(s.port.default),
    host: read(s.host, flags.host, env) ?? s.host.default,
    dbPath: read(s.db, flags.db, env) ?? s.db.default,
    synchronous: read(s.synchronous, undefined, env) ?? "NORMAL",
    pgPoolSize: read(s.pgPoolSize, undefined, env) ?? Number(s.pgPoolSize.default),
    configPath: read(s.config, flags.config, env),
    workers: workers === "auto" ? availableParallelism() : workers,
    reapIntervalMs: (read(s.reapIntervalSeconds, undefined, env) ?? Number(s.reapIntervalSeconds.default)) * 1000,
  };
}
