import type { AnyEnvironment } from "../types.js";
import { doubleCheck } from "./double-check/index.js";
import { math } from "./math/index.js";
import { reasoning } from "./reasoning/index.js";
import { reverseText } from "./reverse-text/index.js";
import { ticTacToe } from "./tic-tac-toe/index.js";
import { toolMath } from "./tool-math/index.js";
import { wordle } from "./wordle/index.js";

/** Every environment that ships with edgegym. */
export const builtinEnvs: AnyEnvironment[] = [reverseText, math, doubleCheck, ticTacToe, wordle, toolMath, reasoning];
