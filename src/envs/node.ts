/**
 * Node-only authoring pieces: file reading for datasets, and (with the builtins) the
 * Pyodide python tool. The Worker build never imports this file.
 */
export { readSource } from "./datasets/read-source.node.js";
export { createNodeOnlyEnvs, nodeOnlyBuiltinEnvs, pythonEnv, pythonSandbox, PyodideSandbox, type PyodideSandboxOptions } from "./builtin/node-only.js";
export { mcpStdioServer } from "./mcp/stdio.node.js";
