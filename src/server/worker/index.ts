// The Cloudflare Workers entry (wrangler.jsonc `main`): the built-in environments over D1.
// Node-only built-ins (python) are registered as declarations only, so a reset of one
// answers env_unavailable instead of env_not_found; their runnable code is not bundled.
import { builtinEnvs } from "../../envs/index.js";
import { nodeOnlyBuiltinDeclarations } from "../../envs/builtin/index.js";
import { createWorker } from "./worker.js";

export default createWorker([...builtinEnvs, ...nodeOnlyBuiltinDeclarations]);
