// The Cloudflare Workers entry (wrangler.jsonc `main`): the built-in environments over D1.
import { builtinEnvs } from "../../envs/index.js";
import { createWorker } from "./worker.js";

export default createWorker(builtinEnvs);
