import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";

// The same ./drizzle files wrangler applies, read by vitest.workerd.config.ts. Applying
// is a no-op after the first file: D1 tracks them in d1_migrations, as wrangler does.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
