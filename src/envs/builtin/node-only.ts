/**
 * Built-in environments that only the Node build can run (they start sandboxed interpreter
 * processes). Only the Node entry imports this file, so the Worker bundle never pulls in Pyodide.
 */
import type { AnyEnvironment } from "../types.js";
import { createMcpUnitsNodeEnv } from "./mcp-units/env.node.js";
import { createPythonEnv } from "./python/index.js";
import { PyodideSandbox, type PyodideSandboxOptions } from "./python/sandbox.node.js";

export { PyodideSandbox, type PyodideSandboxOptions } from "./python/sandbox.node.js";

/** The Node-only built-ins over a sandbox of their own; the caller closes `sandbox` (it kills every interpreter process). */
export function createNodeOnlyEnvs(options: PyodideSandboxOptions = {}): { envs: AnyEnvironment[]; sandbox: PyodideSandbox; closeMcp: () => Promise<void> } {
  const sandbox = new PyodideSandbox({ workers: 1, ...options });
  // mcp-units starts its MCP server process on its first reset; closeMcp ends it.
  const mcpUnits = createMcpUnitsNodeEnv();
  return { envs: [createPythonEnv(sandbox), mcpUnits], sandbox, closeMcp: () => mcpUnits.close() };
}

const shared = createNodeOnlyEnvs();

/** A default sandbox (strong isolation required) for embedders; `edgegym serve` builds its own from its config. */
export const pythonSandbox = shared.sandbox;

export const pythonEnv = shared.envs[0] as AnyEnvironment;

export const nodeOnlyBuiltinEnvs: AnyEnvironment[] = shared.envs;
