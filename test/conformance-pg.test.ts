import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe } from "vitest";
import { describeHttpConformance } from "./conformance/http-conformance.js";
import { describeSeatsConformance } from "./conformance/seats-conformance.js";
import { describeLongHorizonConformance } from "./conformance/long-horizon-conformance.js";
import { freePort, startChildServer, type ChildServer } from "./support/child-server.js";
import { postgresMissing, startPostgres, type TestPostgres } from "./support/postgres.js";

// The Node build on PostgreSQL as users run it: `node bin/edgegym.js serve --db postgres://…`
// against a throwaway cluster (test/support/postgres.ts), the same suite as on SQLite.
const apiKey = "sk-conformance-pg";
const missing = postgresMissing();
let postgres: TestPostgres | undefined;
let server: ChildServer | undefined;
let baseUrl = "";

describe.skipIf(missing !== undefined)(`Node server on PostgreSQL${missing ? ` (skipped: ${missing})` : ""}`, () => {
  beforeAll(async () => {
    if (!existsSync("dist/server/node/cli.js")) throw new Error("dist/ is missing: run `npm run build` first (npm test does)");
    postgres = await startPostgres({ settings: { fsync: "off" } });
    const url = await postgres.createDatabase("conformance");
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    server = await startChildServer({
      command: process.execPath,
      args: ["bin/edgegym.js", "serve", "--port", String(port), "--db", url],
      env: { EDGEGYM_API_KEYS: apiKey },
      healthUrl: `${baseUrl}/health`,
    });
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    await postgres?.stop();
  });

  describeHttpConformance({ name: "Node server (serve --db postgres://…)", baseUrl: () => baseUrl, apiKey, runtime: "node" });

  describeSeatsConformance({ name: "Node server (serve --db postgres://…)", baseUrl: () => baseUrl, apiKey, runtime: "node" });
  describeLongHorizonConformance({ name: "Node server (serve --db postgres://…)", baseUrl: () => baseUrl, apiKey, runtime: "node" });
});
