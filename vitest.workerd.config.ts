import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

// Tests that run inside workerd (the Workers runtime) with a local D1, configured from
// wrangler.jsonc. `npm test` runs them after the Node tests (scripts/test-all.sh).
export default defineConfig(async () => {
  const migrations = await readD1Migrations("./drizzle");
  return {
    plugins: [
      cloudflareTest({
        wrangler: { configPath: "./wrangler.jsonc" },
        miniflare: { bindings: { TEST_MIGRATIONS: migrations } },
      }),
    ],
    test: {
      include: ["test/workerd/**/*.test.ts"],
      setupFiles: ["test/workerd/apply-migrations.ts"],
      testTimeout: 30_000,
      hookTimeout: 60_000,
      maxWorkers: 1,
    },
  };
});
