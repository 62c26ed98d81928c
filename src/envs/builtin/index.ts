import type { AnyEnvironment } from "../types.js";
import { judgeQa } from "./judge-qa/index.js";
import { reverseText } from "./reverse-text/index.js";

/** Every environment that ships with edgegym. */
export const builtinEnvs: AnyEnvironment[] = [reverseText, judgeQa];
