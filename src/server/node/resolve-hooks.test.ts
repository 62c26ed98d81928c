import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { drizzleDir, resolveInside } from "./resolve-hooks.js";

describe("the drizzle-orm resolve shortcut", () => {
  const dir = "file:///app/node_modules/drizzle-orm/";

  it("answers a relative .js import between drizzle's ESM files, and nothing else", () => {
    expect(resolveInside(dir, "./sql/sql.js", `${dir}index.js`)).toEqual({ url: `${dir}sql/sql.js`, format: "module", shortCircuit: true });
    expect(resolveInside(dir, "../column.js", `${dir}sqlite-core/table.js`)).toEqual({ url: `${dir}column.js`, format: "module", shortCircuit: true });
    expect(resolveInside(dir, "./sql.cjs", `${dir}index.cjs`)).toBeNull(); // the CommonJS build
    expect(resolveInside(dir, "./x.js", `${dir}index.cjs`)).toBeNull();
    expect(resolveInside(dir, "zod", `${dir}index.js`)).toBeNull(); // a package
    expect(resolveInside(dir, "../../hono/dist/index.js", `${dir}index.js`)).toBeNull(); // leaves the package
    expect(resolveInside(dir, "./sql.js", "file:///app/dist/server/app.js")).toBeNull();
    expect(resolveInside(dir, "./sql.js", undefined)).toBeNull();
  });

  it("finds the installed drizzle-orm, an ES module package", () => {
    expect(drizzleDir()).toMatch(/^file:\/\/.*\/node_modules\/drizzle-orm\/$/);
  });

  it("resolves every import the server's drizzle modules make exactly as Node does", () => {
    // In a fresh Node: each shortcut answer is checked against Node's own resolver.
    const hooks = new URL("./resolve-hooks.ts", import.meta.url).href;
    const script = `
      import module from "node:module";
      const { drizzleDir, resolveInside } = await import(${JSON.stringify(hooks)});
      const dir = drizzleDir();
      let answered = 0;
      const differ = [];
      module.registerHooks({
        resolve(specifier, context, next) {
          const fast = resolveInside(dir, specifier, context.parentURL);
          if (!fast) return next(specifier, context);
          answered++;
          const slow = next(specifier, context);
          if (slow.url !== fast.url || slow.format !== fast.format) differ.push([specifier, context.parentURL, slow.url, slow.format]);
          return fast;
        },
      });
      await import("drizzle-orm");
      await import("drizzle-orm/sqlite-core");
      await import("drizzle-orm/better-sqlite3");
      await import("drizzle-orm/d1");
      console.log(JSON.stringify({ answered, differ }));
    `;
    const run = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { encoding: "utf8", cwd: process.cwd() });
    expect(run.stderr).toBe("");
    const { answered, differ } = JSON.parse(run.stdout) as { answered: number; differ: unknown[] };
    expect(answered).toBeGreaterThan(100);
    expect(differ).toEqual([]);
  });
});
