import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { MIGRATIONS_DIR } from "./node-sqlite.js";

const dir = mkdtempSync(join(tmpdir(), "edgegym-migrate-race-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Opens `file` in a fresh process (its own SQLite connection, so file locks really race) and reports how many migrations it applied. */
function openInProcess(file: string): Promise<{ code: number | null; out: string }> {
  const script = `import { openNodeDatabase } from ${JSON.stringify(resolve("src/server/db/node-sqlite.ts"))}; openNodeDatabase(process.argv[1]).close(); console.log("opened");`;
  return new Promise((done) => {
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script, file], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (out += c.toString()));
    child.on("close", (code) => done({ code, out }));
  });
}

describe("SQLite migrations under the write lock", () => {
  // Drizzle's migrator checked what was applied before taking the lock, so two servers
  // starting on one new file both migrated and one died on "table episodes already exists"
  // (seen in test/two-processes.test.ts). Four processes on a new file, five times over.
  it("lets several processes open one new file at once, each finding the schema whole", async () => {
    for (let round = 0; round < 5; round++) {
      const file = join(dir, `race-${round}.db`);
      const results = await Promise.all(Array.from({ length: 4 }, () => openInProcess(file)));
      for (const r of results) expect(r.code, r.out).toBe(0);
      const sqlite = new Database(file, { readonly: true });
      const applied = sqlite.prepare(`SELECT count(*) AS n FROM "__drizzle_migrations"`).get() as { n: number };
      const tables = sqlite.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'episodes'`).all();
      sqlite.close();
      const { readMigrationFiles } = await import("drizzle-orm/migrator");
      expect(applied.n).toBe(readMigrationFiles({ migrationsFolder: MIGRATIONS_DIR }).length);
      expect(tables).toHaveLength(1);
    }
  }, 120_000);
});
