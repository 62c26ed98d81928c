import { copyFileSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig, type Plugin } from "vite";

const here = (p: string): string => fileURLToPath(new URL(p, import.meta.url));

/**
 * /docs ships with the package: Swagger UI's prebuilt bundle (swagger-ui-dist, pinned, no
 * dependencies of its own) copied next to the console, with our initializer. Nothing is
 * loaded from a CDN at run time.
 */
function offlineDocs(): Plugin {
  return {
    name: "edgegym-offline-docs",
    apply: "build",
    closeBundle() {
      const dist = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
      const out = here("../dist/console/docs");
      mkdirSync(out, { recursive: true });
      copyFileSync(join(dist, "swagger-ui-bundle.js"), join(out, "swagger-ui-bundle.js"));
      copyFileSync(join(dist, "swagger-ui.css"), join(out, "swagger-ui.css"));
      copyFileSync(here("./docs-init.js"), join(out, "init.js"));
    },
  };
}

// Preact's JSX through Vite's own transform (no plugin: the automatic runtime is all it needs).
// Built into dist/console/ui, served at /ui by both runtimes (src/server/console/routes.ts).
export default defineConfig({
  root: here("."),
  base: "/ui/",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  plugins: [offlineDocs()],
  build: {
    outDir: here("../dist/console/ui"),
    emptyOutDir: true,
    modulePreload: false,
    reportCompressedSize: false,
  },
  logLevel: "warn",
});
