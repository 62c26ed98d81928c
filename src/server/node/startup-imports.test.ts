import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

// `edgegym serve` starts without the packages only some requests use: mathjs (loaded with
// the first math answer checked, envs/math/mathjs.ts), openai (the first judge or eval model
// call, envs/openai-module.ts) and the MCP SDK (the first MCP request or MCP env connection).
// Together they were over half its start-up (`node scripts/startup-time.mjs`).
describe("the CLI's start-up", () => {
  it("imports neither mathjs, openai nor the MCP SDK", () => {
    const cli = new URL("./cli.ts", import.meta.url).href;
    const script = `
      import module from "node:module";
      const packages = new Set();
      module.registerHooks({
        resolve(specifier, context, next) {
          const out = next(specifier, context);
          const m = /\\/node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(out.url);
          if (m) packages.add(m[1]);
          return out;
        },
      });
      process.argv = [process.argv[0], "edgegym", "help"];
      await import(${JSON.stringify(cli)});
      process.stderr.write(JSON.stringify([...packages].sort()));
    `;
    const run = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { encoding: "utf8", cwd: process.cwd() });
    const packages = JSON.parse(run.stderr) as string[];
    expect(packages).toContain("drizzle-orm"); // the hook saw the server's modules
    expect(packages.filter((p) => ["mathjs", "openai", "@modelcontextprotocol/sdk"].includes(p))).toEqual([]);
  });
});
