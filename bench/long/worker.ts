// The Worker `npm run bench:long` drives: the built-in environments plus bench-long,
// served by wrangler dev with bench/long/wrangler.jsonc (local D1, ./drizzle applied).
import { builtinEnvs } from "../../src/envs/index.js";
import { createWorker } from "../../src/server/worker/worker.js";
import { benchLong } from "./long-env.js";

export default createWorker([...builtinEnvs, benchLong]);
