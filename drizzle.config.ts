import { defineConfig } from "drizzle-kit";

// One set of migrations for both runtimes: the Node build applies them with drizzle's
// migrator, the Worker build with `wrangler d1 migrations apply` (migrations_dir).
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/server/db/schema.ts",
  out: "./drizzle",
});
