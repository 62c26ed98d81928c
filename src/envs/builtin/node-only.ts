/**
 * Built-in environments that only the Node build can run (they use worker threads). Only
 * the Node entry imports this file, so the Worker bundle never pulls in Pyodide.
 */
import type { AnyEnvironment } from "../types.js";
import { createPythonEnv } from "./python/index.js";
import { PyodideSandbox } from "./python/sandbox.node.js";

export { PyodideSandbox, type PyodideSandboxOptions } from "./python/sandbox.node.js";

/** The interpreter pool the `python` environment runs on; started on its first call. */
export const pythonSandbox = new PyodideSandbox({ workers: 1 });

export const pythonEnv = createPythonEnv(pythonSandbox);

export const nodeOnlyBuiltinEnvs: AnyEnvironment[] = [pythonEnv];
