/**
 * Stands in for Node's `crypto` module in the Worker bundle. mathjs's random functions
 * (through seedrandom) try `require("crypto")` inside a try/catch and fall back to the
 * Web Crypto global, which Workers have; without this alias the bundle would name a
 * Node module that a Worker without nodejs_compat cannot load.
 */
export default {};
