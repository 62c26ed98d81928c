// The Worker entry's body when it is built with Harbor tasks (scripts/worker-harbor.ts
// generates the entry module: it imports the task bundle, declares one HarborBox subclass
// per task image, and exports this Worker). Everything else is the ordinary Worker.
import { nodeOnlyBuiltinDeclarations } from "../../envs/builtin/index.js";
import { builtinEnvs } from "../../envs/index.js";
import { harborWorkerEnv, type HarborWorkerVars } from "./harbor.js";
import { createWorker, type EdgegymWorker } from "./worker.js";

export { HarborBox } from "./durable/harbor-box.js";
export { EpisodeIndexObject } from "./durable/episode-index-object.js";
export { EpisodeObject } from "./durable/episode-object.js";

/** The Worker serving the built-in environments plus `harbor` over the bundled tasks. */
export function harborWorker(bundle: unknown): EdgegymWorker {
  return createWorker([...builtinEnvs, ...nodeOnlyBuiltinDeclarations], {
    envsFor: (bindings) => [harborWorkerEnv(bundle, bindings as unknown as HarborWorkerVars & Record<string, unknown>)],
  });
}
