/**
 * This package's version, as package.json says (a test keeps the two equal). A constant
 * rather than a read of package.json because the Worker bundle has no file system and
 * package.json sits outside the compiled `src/` root; /health and the OpenAPI document's
 * `info.version` both report it, on Node and on Workers alike.
 */
export const EDGEGYM_VERSION = "0.1.0";
