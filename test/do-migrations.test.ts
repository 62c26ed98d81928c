import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DO_MIGRATIONS_FILE, durableMigrationsModule } from "../scripts/do-migrations.js";

describe("the episode objects' migrations bundle", () => {
  it("is made from ./drizzle and current (npm run db:generate regenerates it)", () => {
    expect(readFileSync(DO_MIGRATIONS_FILE, "utf8")).toBe(durableMigrationsModule());
  });
});
