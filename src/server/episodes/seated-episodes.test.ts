import { afterAll } from "vitest";
import { builtinEnvs, EnvRegistry } from "../../envs/index.js";
import { createApp } from "../app.js";
import { openNodeDatabase } from "../db/node-sqlite.js";
import { describeSeatsConformance } from "../../../test/conformance/seats-conformance.js";

// The seats contract in-process (Hono's app.fetch over in-memory SQLite); test/conformance-*.test.ts run it against every runtime.
const database = openNodeDatabase(":memory:");
afterAll(() => database.close());
const { app } = createApp({ db: database.db, registry: new EnvRegistry("node", builtinEnvs) });
describeSeatsConformance({ name: "in-process app", baseUrl: () => "http://local", fetch: async (request) => app.fetch(request) });
