import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import Database from "better-sqlite3";
import { readFileSync } from "node:fs";
import { defineConfig } from "vitest/config";

// Tests that run inside workerd (the Workers runtime) with a local D1, configured from
// wrangler.jsonc. `npm test` runs them after the Node tests (scripts/test-all.sh).
export default defineConfig(async () => {
  const migrations = await readD1Migrations("./drizzle");
  // The episodes of a database the previous release made (test/fixtures/db-0.1.0), read
  // here in Node and copied into a second D1 database inside workerd (test/workerd/migrate-release-d1.test.ts).
  const release = new Database("test/fixtures/db-0.1.0/edgegym-0.1.0.sqlite", { readonly: true });
  const releaseEpisodes = release.prepare("SELECT * FROM episodes ORDER BY id").all() as Record<string, string | number | null>[];
  release.close();
  return {
    plugins: [
      cloudflareTest({
        wrangler: { configPath: "./wrangler.jsonc" },
        miniflare: {
          bindings: {
            TEST_MIGRATIONS: migrations,
            RELEASE_EPISODES: releaseEpisodes,
            LEGACY_EPISODES_SQL: readFileSync("./test/fixtures/db-0002-episodes.sql", "utf8"),
          },
          // Second local D1 databases: RELEASE_DB for test/workerd/migrate-release-d1.test.ts,
          // LEGACY_DB for test/workerd/migrate-long-horizon.test.ts (each made as an earlier release left it, then migrated).
          d1Databases: { RELEASE_DB: "edgegym-release-db", LEGACY_DB: "edgegym-legacy-db" },
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
