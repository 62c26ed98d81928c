import { defineConfig } from "drizzle-kit";

// The PostgreSQL engine's migrations (`npm run db:generate:pg`), kept apart from the
// SQLite/D1 ones in ./drizzle: the Node server applies them at startup when EDGEGYM_DB
// is a postgres:// URL (src/server/db/pg/open.ts).
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/server/db/pg/schema.ts",
  out: "./drizzle-pg",
});
