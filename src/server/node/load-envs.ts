import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { AnyEnvironment } from "../../envs/index.js";

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

/**
 * Loads environments from files or installed packages (`--env ./my-env.js`,
 * `--env @acme/edgegym-env`). A module may export one environment as default, an
 * array of them, or named environment exports.
 */
export async function loadEnvModules(specifiers: readonly string[]): Promise<AnyEnvironment[]> {
  const out: AnyEnvironment[] = [];
  for (const spec of specifiers) {
    const looksLikePath = spec.startsWith(".") || isAbsolute(spec);
    const target = looksLikePath ? pathToFileURL(resolve(spec)).href : spec;
    const mod = (await import(target)) as Record<string, unknown>;
    const found = Object.values(mod).flatMap((v) => (Array.isArray(v) ? v : [v])).filter(isEnvironment);
    const unique = [...new Map(found.map((e) => [e.id, e])).values()];
    if (unique.length === 0) throw new Error(`--env ${spec}: the module exports no environment (an object made with defineEnv or a helper)`);
    out.push(...unique);
  }
  return out;
}
