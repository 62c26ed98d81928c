import type { D1Migration } from "cloudflare:test";
import type { D1Database } from "@cloudflare/workers-types/index.ts";
import type { WorkerBindings } from "../../src/server/worker/worker.js";

// The bindings tests see: the Worker's own (wrangler.jsonc) plus the migrations the
// config passes in.
declare global {
  namespace Cloudflare {
    interface Env extends WorkerBindings {
      TEST_MIGRATIONS: D1Migration[];
      /** A second D1 database, empty: test/workerd/migrate-release-d1.test.ts migrates it as the previous release left it. */
      RELEASE_DB: D1Database;
      /** The episodes rows of test/fixtures/db-0.1.0/edgegym-0.1.0.sqlite, by column name. */
      RELEASE_EPISODES: Record<string, string | number | null>[];
      /** test/fixtures/db-0002-episodes.sql: rows as the release at migration 0002 wrote them. */
      LEGACY_EPISODES_SQL: string;
      LEGACY_DB: WorkerBindings["DB"];
    }
  }
}
