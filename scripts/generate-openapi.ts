/**
 * Writes openapi/openapi.json from the route schemas (`npm run openapi`). The document
 * is checked in so clients can be generated without running a server; a test fails
 * when this file is stale.
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { buildOpenApiDocument } from "../src/server/openapi/build.js";

const target = fileURLToPath(new URL("../openapi/openapi.json", import.meta.url));
writeFileSync(target, `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`);
console.log(`wrote ${target}`);
