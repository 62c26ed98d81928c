import { EnvRegistry } from "../../envs/index.js";
import { createApp } from "../app.js";
import type { EdgegymDb } from "../db/database.js";
import { OPENAPI_INFO } from "./document.js";
import { withIntegerBounds } from "./integer-bounds.js";

/**
 * The OpenAPI document of every route. Building it needs no database and no
 * environments: the routes and their schemas are the same whatever the server runs.
 */
export function buildOpenApiDocument(): ReturnType<ReturnType<typeof createApp>["app"]["getOpenAPI31Document"]> {
  const { app } = createApp({ db: {} as EdgegymDb, registry: new EnvRegistry("node") });
  return withIntegerBounds(app.getOpenAPI31Document(OPENAPI_INFO));
}
