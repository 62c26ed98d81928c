import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect } from "vitest";
import { REPO_ROOT, startNodeServer, type ChildServer } from "./node-server.js";

/*
 * What the tests that drive a real server with another project's own Python client share
 * (openenv-core, openreward): the pinned venv that scripts/<name>-venv.sh makes, skipped
 * with a note when absent and failed when CI requires it; an open and a keyed server; and
 * running a script, or a documentation block as printed, with that venv's python.
 */

export interface PinnedVenv {
  /** The Python client's venv (scripts/<name>-venv.sh), e.g. "openenv". */
  name: string;
  /** `EDGEGYM_<X>_PYTHON` points at another python; `EDGEGYM_REQUIRE_<X>=1` fails without one. */
  envVar: string;
}

/** The venv's python and whether it is there; without it the caller skips (or, when CI requires it, this throws). */
export function pinnedVenvPython(venv: PinnedVenv, what: string): { python: string; ready: boolean } {
  const python = process.env[`EDGEGYM_${venv.envVar}_PYTHON`] ?? join(REPO_ROOT, `trainer-adapter/.venv-${venv.name}/bin/python`);
  const ready = existsSync(python);
  if (!ready) {
    const why = `${what}: no ${python}; run bash scripts/${venv.name}-venv.sh`;
    if (process.env[`EDGEGYM_REQUIRE_${venv.envVar}`] === "1") throw new Error(why);
    console.warn(`${why} (skipping)`);
  }
  return { python, ready };
}

export interface ServerPair {
  /** The temporary folder that holds both databases (and any script a test writes). */
  readonly dir: string;
  /** A server with no API keys. */
  readonly open: ChildServer;
  /** A server that takes only `keys` (EDGEGYM_API_KEYS). */
  readonly keyed: ChildServer;
}

/** Starts an open and a keyed Node server before the enclosing describe's tests, stops them after; `args` go to both (`--env` a fixture). */
export function serverPair(prefix: string, keys: string, args: string[] = []): ServerPair {
  const pair = {} as { dir: string; open: ChildServer; keyed: ChildServer };
  beforeAll(async () => {
    pair.dir = mkdtempSync(join(tmpdir(), prefix));
    [pair.open, pair.keyed] = await Promise.all([
      startNodeServer({ db: join(pair.dir, "open.db"), args }),
      startNodeServer({ db: join(pair.dir, "keyed.db"), args, env: { EDGEGYM_API_KEYS: keys } }),
    ]);
  }, 90_000);
  afterAll(async () => {
    await Promise.all([pair.open?.stop(), pair.keyed?.stop()]);
    if (pair.dir) rmSync(pair.dir, { recursive: true, force: true });
  });
  return pair;
}

export interface PythonRun {
  code: number | null;
  out: string;
  err: string;
}

/** Runs `python args…` to its end, output collected; `env` replaces the inherited environment. */
export async function runPython(python: string, args: string[], env?: NodeJS.ProcessEnv): Promise<PythonRun> {
  const child = spawn(python, args, { stdio: ["ignore", "pipe", "pipe"], ...(env ? { env } : {}) });
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  return { code, out, err };
}

/** The JSON object a driver script prints on its last line. */
export function lastJsonLine(out: string): Record<string, unknown> & { tic_tac_toe?: { last?: string } } {
  return JSON.parse(out.trim().split("\n").at(-1) ?? "{}");
}

/** The ```python blocks of a docs page, in order. */
export function pythonBlocks(docPath: string): string[] {
  return [...readFileSync(join(REPO_ROOT, docPath), "utf8").matchAll(/```python\n([\s\S]*?)```/g)].map((m) => m[1] as string);
}

/**
 * Runs a docs block as printed against `server` (only the address and the key placeholder
 * are swapped in: http://localhost:8787, sk-your-key) and expects it to succeed; its stdout lines.
 */
export function runDocBlock(python: string, server: ChildServer, dir: string, code: string, key: string, env?: NodeJS.ProcessEnv): string[] {
  const file = join(dir, "block.py");
  writeFileSync(file, code.replaceAll("http://localhost:8787", server.url).replaceAll("sk-your-key", key));
  const result = spawnSync(python, [file], { encoding: "utf8", timeout: 60_000, ...(env ? { env } : {}) });
  expect(result.status, `${result.error?.message ?? ""}${result.stderr}\n${server.output()}`).toBe(0);
  return result.stdout.split("\n");
}
