import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import type { StaticAssets } from "../console/static-assets.js";

/**
 * `dist/console` of this package (built by `npm run build`): three levels up from this file
 * both as source (src/server/node) and as built code (dist/server/node).
 */
export const CONSOLE_DIR = fileURLToPath(new URL("../../../dist/console/", import.meta.url));

/**
 * The console's files read from disk. Paths arrive checked by `safeAssetPath` (plain
 * segments only), so a join cannot leave `root`; a missing file (or a folder) is null.
 */
export function consoleFilesOnDisk(root: string = CONSOLE_DIR): StaticAssets {
  return {
    async read(path) {
      try {
        return new Uint8Array(await readFile(join(root, path)));
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === "ENOENT" || code === "EISDIR" || code === "ENOTDIR") return null;
        throw err;
      }
    },
  };
}
