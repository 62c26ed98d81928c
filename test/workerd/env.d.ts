import type { D1Migration } from "cloudflare:test";
import type { WorkerBindings } from "../../src/server/worker/worker.js";

// The bindings tests see: the Worker's own (wrangler.jsonc) plus the migrations the
// config passes in.
declare global {
  namespace Cloudflare {
    interface Env extends WorkerBindings {
      TEST_MIGRATIONS: D1Migration[];
      /** test/fixtures/db-0002-episodes.sql: rows as the release at migration 0002 wrote them. */
      LEGACY_EPISODES_SQL: string;
      LEGACY_DB: WorkerBindings["DB"];
    }
  }
}
