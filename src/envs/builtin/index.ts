import type { AnyEnvironment } from "../types.js";
import { customerService } from "./customer-service/index.js";
import { doubleCheck } from "./double-check/index.js";
import { judgeQa } from "./judge-qa/index.js";
import { kuhnPoker } from "./kuhn-poker/index.js";
import { math } from "./math/index.js";
import { mcpUnitsDeclaration } from "./mcp-units/index.js";
import { pythonEnvDeclaration } from "./python/index.js";
import { reasoning } from "./reasoning/index.js";
import { reverseText } from "./reverse-text/index.js";
import { ticTacToe } from "./tic-tac-toe/index.js";
import { ticTacToe2p } from "./tic-tac-toe/two-player.js";
import { toolMath } from "./tool-math/index.js";
import { wordle } from "./wordle/index.js";

/** Every environment that ships with edgegym. */
export const builtinEnvs: AnyEnvironment[] = [reverseText, math, doubleCheck, ticTacToe, ticTacToe2p, wordle, toolMath, reasoning, judgeQa, customerService, kuhnPoker];

/**
 * Node-only built-ins as the other runtimes declare them (their runtimes exclude "worker"):
 * the Worker entry registers these so a reset answers env_unavailable, not env_not_found.
 * The Node entry registers the runnable ones from ./node-only.js instead.
 */
export const nodeOnlyBuiltinDeclarations: AnyEnvironment[] = [pythonEnvDeclaration, mcpUnitsDeclaration];
