import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { readFileSync } from "node:fs";
import { defineConfig } from "vitest/config";

// Tests that run inside workerd (the Workers runtime) with a local D1, configured from
// wrangler.jsonc. `npm test` runs them after the Node tests (scripts/test-all.sh).
export default defineConfig(async () => {
  const migrations = await readD1Migrations("./drizzle");
  return {
    plugins: [
      cloudflareTest({
        wrangler: { configPath: "./wrangler.jsonc" },
        miniflare: {
          bindings: { TEST_MIGRATIONS: migrations, LEGACY_EPISODES_SQL: readFileSync("./test/fixtures/db-0002-episodes.sql", "utf8") },
          // A second local D1 for test/workerd/migrate-0003.test.ts: made at migration 0002, then migrated.
          d1Databases: ["LEGACY_DB"],
        },
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
