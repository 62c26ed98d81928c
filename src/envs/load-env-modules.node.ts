/**
 * Environments from modules and packages named by `--env` (a path, a package name, or
 * `harbor:DIR`), for every Node entry that takes them: `edgegym serve`, `edgegym eval`,
 * rescoring and the scoring threads. It sits in the environment layer, below the server
 * and the eval CLI, so neither imports the other to load environments.
 */
import { readFile, stat } from "node:fs/promises";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { AnyEnvironment } from "./index.js";

function isEnvironment(value: unknown): value is AnyEnvironment {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as AnyEnvironment).id === "string" &&
    typeof (value as AnyEnvironment).setup === "function" &&
    typeof (value as AnyEnvironment).respond === "function" &&
    typeof (value as AnyEnvironment).rubric === "object"
  );
}

interface PackageJson {
  name?: string;
  main?: string;
  exports?: unknown;
}

/** The ESM entry named by an `exports` value: a path, or conditions (import > node > default), nested. */
function exportsEntry(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const map = value as Record<string, unknown>;
  if ("." in map) return exportsEntry(map["."]);
  for (const condition of ["import", "node", "default"]) {
    const found = exportsEntry(map[condition]);
    if (found) return found;
  }
  return undefined;
}

/** A package folder's entry file: `exports["."]`, else `main`, else `index.js`. */
export async function packageEntry(dir: string): Promise<string> {
  let pkg: PackageJson = {};
  try {
    pkg = JSON.parse(await readFile(join(dir, "package.json"), "utf8")) as PackageJson;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw new Error(`${join(dir, "package.json")}: ${(err as Error).message}`, { cause: err });
  }
  return resolve(dir, exportsEntry(pkg.exports) ?? pkg.main ?? "index.js");
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Where `--env SPEC` points, as a URL to import. A path (./x, ../x, /x) is a module file
 * or a package folder; a name is looked up in node_modules from `cwd` upwards (so a
 * package installed in the user's project is found wherever edgegym itself lives), and
 * otherwise left to Node's own resolution.
 */
export async function resolveEnvSpecifier(spec: string, cwd: string = process.cwd()): Promise<string> {
  const looksLikePath = spec.startsWith(".") || isAbsolute(spec);
  if (looksLikePath) {
    const path = resolve(cwd, spec);
    return pathToFileURL((await isDirectory(path)) ? await packageEntry(path) : path).href;
  }
  const parts = spec.split("/");
  const name = spec.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] as string);
  const subpath = parts.slice(spec.startsWith("@") ? 2 : 1).join("/");
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", name);
    if (await isDirectory(candidate)) return pathToFileURL(subpath ? join(candidate, subpath) : await packageEntry(candidate)).href;
    if (dirname(dir) === dir) break;
  }
  return spec;
}

/** `--env harbor:DIR`: a directory of Harbor task directories, served as the `harbor` environment on Docker (docs/sandboxes.md). */
export const HARBOR_ENV_PREFIX = "harbor:";

/** `--env` values apart: Harbor task directories (`harbor:DIR`), and modules for loadEnvModules. */
export function splitEnvSpecs(specs: readonly string[]): { harborDirs: string[]; modules: string[] } {
  const harborDirs: string[] = [];
  const modules: string[] = [];
  for (const spec of specs) {
    if (spec === HARBOR_ENV_PREFIX) throw new Error("--env harbor: needs its directory: --env harbor:DIR");
    if (spec.startsWith(HARBOR_ENV_PREFIX)) harborDirs.push(spec.slice(HARBOR_ENV_PREFIX.length));
    else modules.push(spec);
  }
  return { harborDirs, modules };
}

/**
 * Loads environments from files, package folders or installed packages (`--env ./my-env.js`,
 * `--env ./my-env-package`, `--env @acme/edgegym-env`). A module may export one
 * environment as default, an array of them, or named environment exports.
 */
export async function loadEnvModules(specifiers: readonly string[], cwd: string = process.cwd()): Promise<AnyEnvironment[]> {
  const out: AnyEnvironment[] = [];
  for (const spec of specifiers) {
    const target = await resolveEnvSpecifier(spec, cwd);
    let mod: Record<string, unknown>;
    try {
      mod = (await import(target)) as Record<string, unknown>;
    } catch (err) {
      throw new Error(`--env ${spec}: cannot load ${target}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    const unique = environmentsIn(mod);
    if (unique.length === 0) throw new Error(`--env ${spec}: the module exports no environment (an object made with defineEnv or a helper)`);
    for (const env of unique) moduleUrls.set(env, target);
    out.push(...unique);
  }
  return out;
}

/** The environments a module exports (default, named, or in arrays), one per id. */
export function environmentsIn(mod: Record<string, unknown>): AnyEnvironment[] {
  const found = Object.values(mod).flatMap((v) => (Array.isArray(v) ? v : [v])).filter(isEnvironment);
  return [...new Map(found.map((e) => [e.id, e])).values()];
}

const moduleUrls = new WeakMap<AnyEnvironment, string>();

/** The module `loadEnvModules` loaded `env` from (what a scoring thread imports again), or undefined. */
export function envModuleUrl(env: AnyEnvironment): string | undefined {
  return moduleUrls.get(env);
}
