// The Cloudflare Workers entry (wrangler.jsonc `main`): the built-in environments over D1.
// Node-only built-ins (python) are registered as declarations only, so a reset of one
// answers env_unavailable instead of env_not_found; their runnable code is not bundled.
import { builtinEnvs } from "../../envs/index.js";
import { nodeOnlyBuiltinDeclarations } from "../../envs/builtin/index.js";
import { createWorker } from "./worker.js";

// The Durable Object classes wrangler.jsonc binds (EPISODES, EPISODE_INDEX): a module
// must export the classes its bindings name, whichever store EDGEGYM_EPISODE_STORE picks.
export { EpisodeObject } from "./durable/episode-object.js";
export { EpisodeIndexObject } from "./durable/episode-index-object.js";

export default createWorker([...builtinEnvs, ...nodeOnlyBuiltinDeclarations]);
