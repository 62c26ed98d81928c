import { execFileSync, spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuiltDist, ROOT } from "./support/built-dist.js";

/**
 * `npm start` as a new user runs it: no TypeScript build when dist/ is current (it used to
 * run tsc on every start), a build when src/ changed, and on an old Node the message that
 * bin/edgegym.js prints rather than a segfault.
 */
const work = mkdtempSync(join(tmpdir(), "edgegym-start-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("npm start", () => {
  beforeAll(() => ensureBuiltDist(), 120_000);

  it("serves from an up-to-date dist/ without compiling", async () => {
    const marker = join(ROOT, "dist", "server", "node", "cli.js");
    const before = statSync(marker).mtimeMs;
    // This Node first on PATH, as a user with Node 22 installed has it.
    const env = { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ""}` };
    const child = spawn("npm", ["start", "--silent", "--", "--port", "0", "--db", ":memory:"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let out = "";
    let err = "";
    child.stderr.on("data", (c: Buffer) => (err += c.toString()));
    const url = await new Promise<string>((done, fail) => {
      const timer = setTimeout(() => fail(new Error(`no listening line:\n${out}\n${err}`)), 30_000);
      child.stdout.on("data", (c: Buffer) => {
        out += c.toString();
        const m = /listening on (http:\/\/\S+?)[ ,(]/.exec(out);
        if (m) {
          clearTimeout(timer);
          done(m[1] as string);
        }
      });
    });
    try {
      expect((await (await fetch(`${url}/health`)).json()).status).toBe("ok");
      expect(err).not.toMatch(/compiling/);
      expect(statSync(marker).mtimeMs).toBe(before);
    } finally {
      process.kill(-(child.pid as number), "SIGTERM");
    }
  });

  const oldNode = "/usr/bin/node";
  const oldMajor = existsSync(oldNode) ? Number(execFileSync(oldNode, ["-p", "process.versions.node.split('.')[0]"], { encoding: "utf8" }).trim()) : Infinity;
  it.skipIf(!(oldMajor < 22))("on Node 20 stops with the message, not a segfault", () => {
    const bin = join(work, "old-node-bin");
    mkdirSync(bin, { recursive: true });
    symlinkSync(oldNode, join(bin, "node"));
    const run = spawnSync("npm", ["start", "--silent"], { cwd: ROOT, encoding: "utf8", timeout: 60_000, env: { ...process.env, PATH: `${bin}:${process.env.PATH}` } });
    expect(run.stderr).toMatch(/edgegym needs Node\.js 22\.3 or newer; this is Node 20\./);
    expect(run.signal).toBeNull();
    expect(run.status).not.toBe(0);
  });
});

describe("bin/ensure-build.js", () => {
  /** A checkout in miniature: the script beside a src/ and a dist/ whose times the test sets. */
  async function checkout(name: string, files: Record<string, number>): Promise<() => string | null> {
    const root = join(work, name);
    for (const [path, mtime] of Object.entries(files)) {
      mkdirSync(join(root, path, ".."), { recursive: true });
      writeFileSync(join(root, path), "");
      utimesSync(join(root, path), mtime, mtime);
    }
    mkdirSync(join(root, "bin"), { recursive: true });
    copyFileSync(join(ROOT, "bin", "ensure-build.js"), join(root, "bin", "ensure-build.js"));
    const mod = (await import(pathToFileURL(join(root, "bin", "ensure-build.js")).href)) as { staleReason: () => string | null };
    return mod.staleReason;
  }

  it("is current when every source is older than the build, tests aside", async () => {
    const stale = await checkout("current", { "tsconfig.build.json": 1, "src/a.ts": 100, "src/deep/b.ts": 150, "src/deep/b.test.ts": 900, "dist/server/node/cli.js": 200 });
    expect(stale()).toBeNull();
  });

  it("rebuilds when a source changed after the build, at any depth", async () => {
    const stale = await checkout("changed", { "tsconfig.build.json": 1, "src/a.ts": 100, "src/deep/er/b.ts": 300, "dist/server/node/cli.js": 200 });
    expect(stale()).toBe("src/ changed since the last build");
  });

  it("builds when dist/ is missing", async () => {
    const stale = await checkout("missing", { "tsconfig.build.json": 1, "src/a.ts": 100 });
    expect(stale()).toBe("dist/ is missing");
  });

  it("builds the console (/ui, /docs) once when a checkout has none, and never in an installed package", async () => {
    // A stand-in for scripts/ensure-console.sh that records its runs and makes the file it checks for.
    const fake = (name: string, withTsconfig: boolean) => {
      const root = join(work, name);
      for (const dir of ["bin", "console", "scripts", "node_modules/vite"]) mkdirSync(join(root, dir), { recursive: true });
      if (withTsconfig) writeFileSync(join(root, "tsconfig.build.json"), "{}");
      writeFileSync(join(root, "scripts", "ensure-console.sh"), 'echo run >> runs.txt; mkdir -p dist/console/ui && touch dist/console/ui/index.html\n');
      copyFileSync(join(ROOT, "bin", "ensure-build.js"), join(root, "bin", "ensure-build.js"));
      return root;
    };
    const runs = (root: string) => (existsSync(join(root, "runs.txt")) ? execFileSync("cat", [join(root, "runs.txt")], { encoding: "utf8" }).trim().split("\n").length : 0);
    const clone = fake("fresh-console", true);
    const mod = (await import(pathToFileURL(join(clone, "bin", "ensure-build.js")).href)) as { ensureConsole: () => void };
    mod.ensureConsole();
    mod.ensureConsole();
    expect(runs(clone)).toBe(1);
    expect(existsSync(join(clone, "dist", "console", "ui", "index.html"))).toBe(true);
    const installed = fake("installed-console", false);
    ((await import(pathToFileURL(join(installed, "bin", "ensure-build.js")).href)) as { ensureConsole: () => void }).ensureConsole();
    expect(runs(installed)).toBe(0);
  });

  it("does nothing in an installed package (no tsconfig.build.json)", async () => {
    const stale = await checkout("installed", { "src/a.ts": 300, "dist/server/node/cli.js": 200 });
    expect(stale()).toBeNull();
  });
});
