import module from "node:module";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * A module resolve hook for the CLI (bin/edgegym.js installs it before the CLI loads), for one
 * costly case in Node 22's ESM loader. Resolving an ESM `.js` file, Node looks up the
 * package.json around it for its `type`, and in doing so parses that package.json's `exports`
 * again, every time (getPackageScopeConfig copies every field, the lazily parsed `exports`
 * among them). drizzle-orm's package.json is 179 KB, nearly all `exports`: the ~110 drizzle
 * modules the server loads cost ~0.5 s of start-up in that alone (a third of it, measured
 * with `node scripts/startup-time.mjs`).
 *
 * drizzle-orm's ESM files import each other by relative paths with the `.js` extension, in a
 * package of `"type": "module"`, so such an import is the file beside its parent, an ES
 * module: the hook answers that without the lookup. Every other resolution is Node's own.
 */

/** A relative import of a `.js` file from a `.js` file inside `dir` (a file: URL ending in "/"), as Node resolves it there; null for anything else. */
export function resolveInside(dir: string, specifier: string, parentURL: string | undefined): module.ResolveFnOutput | null {
  if (!parentURL?.startsWith(dir) || !parentURL.endsWith(".js")) return null;
  if (!(specifier.startsWith("./") || specifier.startsWith("../")) || !specifier.endsWith(".js")) return null;
  const url = new URL(specifier, parentURL).href;
  if (!url.startsWith(dir)) return null;
  return { url, format: "module", shortCircuit: true };
}

/** drizzle-orm's folder as a file: URL, when it is an ES module package Node can resolve from here; null otherwise. */
export function drizzleDir(): string | null {
  try {
    const entry = import.meta.resolve("drizzle-orm");
    const dir = new URL("./", entry).href;
    const pkg = JSON.parse(readFileSync(fileURLToPath(new URL("package.json", dir)), "utf8")) as { name?: unknown; type?: unknown };
    return pkg.name === "drizzle-orm" && pkg.type === "module" ? dir : null;
  } catch {
    return null;
  }
}

/**
 * Installs the hook where Node has synchronous hooks (`module.registerHooks`, Node 22.15+);
 * elsewhere start-up only takes longer. Returns whether it was installed.
 */
export function installResolveHooks(): boolean {
  const register = (module as { registerHooks?: typeof module.registerHooks }).registerHooks;
  if (typeof register !== "function") return false;
  const dir = drizzleDir();
  if (!dir) return false;
  register({ resolve: (specifier, context, nextResolve) => resolveInside(dir, specifier, context.parentURL) ?? nextResolve(specifier, context) });
  return true;
}
