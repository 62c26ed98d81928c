import type { AnyEnvironment, EnvRegistry } from "../../envs/index.js";
import { ApiError } from "../errors.js";

/** The environment `id` names, or the API error that says why none runs here (404 or 422). */
export function resolvedEnv(registry: Pick<EnvRegistry, "resolve">, id: string): AnyEnvironment {
  const found = registry.resolve(id);
  if (found.status === "found") return found.env;
  if (found.status === "unavailable") throw new ApiError("env_unavailable", found.reason);
  throw new ApiError("env_not_found", `${found.reason}; GET /v1/envs lists them`);
}
