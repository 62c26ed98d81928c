import type { AnyEnvironment } from "../types.js";
import { judgeQa } from "./judge-qa/index.js";
import { pythonEnvDeclaration } from "./python/index.js";
import { reverseText } from "./reverse-text/index.js";

/** Every environment that ships with edgegym. */
export const builtinEnvs: AnyEnvironment[] = [reverseText, judgeQa];

/**
 * Node-only built-ins as the other runtimes declare them (their runtimes exclude "worker"):
 * the Worker entry registers these so a reset answers env_unavailable, not env_not_found.
 * The Node entry registers the runnable ones from ./node-only.js instead.
 */
export const nodeOnlyBuiltinDeclarations: AnyEnvironment[] = [pythonEnvDeclaration];
