import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, delimiter, dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuiltDist, ROOT } from "./support/built-dist.js";
import { freePort, startChildServer } from "./support/child-server.js";

/**
 * edgegym as someone outside this checkout gets it: `npm pack`'s tarball run with
 * `npx ./edgegym-x.y.z.tgz`, and an environment package made by `edgegym init` that depends
 * on the tarball, installed by npm, passing its own tests, served by Node and by the Worker
 * runtime (wrangler dev, workerd, a local D1). Dependencies come from npm's cache when it
 * has them (--prefer-offline), else from the registry.
 */
const work = mkdtempSync(join(tmpdir(), "edgegym-pack-"));
// This Node first on PATH: npm's children (the CLI, wrangler) must run on Node 22 too.
const env = { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ""}`, npm_config_prefer_offline: "true", npm_config_audit: "false", npm_config_fund: "false", npm_config_update_notifier: "false" };
let tarball = "";

function npm(args: string[], cwd: string, timeout = 180_000): { status: number | null; out: string } {
  const run = spawnSync("npm", args, { cwd, env, encoding: "utf8", timeout });
  return { status: run.status, out: `${run.stdout}\n${run.stderr}` };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked by the assertions
async function post(url: string, body?: unknown): Promise<any> {
  const res = await fetch(url, { method: "POST", headers: body === undefined ? {} : { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  return res.json();
}

/** Plays task 0 of `envId` with its right answer over HTTP and returns the stored score. */
async function playRight(base: string, envId: string, answer: string): Promise<number> {
  const reset = await post(`${base}/v1/envs/${envId}/episodes`, { split: "train", index: 0 });
  await post(`${base}/v1/episodes/${reset.episode_id}/step`, { turn: 0, message: { role: "assistant", content: `<answer>${answer}</answer>` } });
  return (await post(`${base}/v1/episodes/${reset.episode_id}/score`)).score.reward;
}

beforeAll(() => {
  ensureBuiltDist();
  // dist/ is current (above), so the pack skips the prepack script's second build.
  const packed = npm(["pack", "--ignore-scripts", "--silent", "--pack-destination", work], ROOT, 60_000);
  expect(packed.status, packed.out).toBe(0);
  tarball = join(work, readdirSync(work).find((f) => f.endsWith(".tgz")) as string);
}, 120_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("npm pack", () => {
  it("ships the built CLI, both engines' migrations and no tests", () => {
    const files = execFileSync("tar", ["tzf", tarball], { encoding: "utf8" }).split("\n");
    expect(files).toContain("package/bin/edgegym.js");
    expect(files).toContain("package/dist/server/node/cli.js");
    expect(files).toContain("package/dist/server/worker/worker.js");
    expect(files.some((f) => f.startsWith("package/drizzle/") && f.endsWith(".sql"))).toBe(true);
    // The PostgreSQL engine's migrations, applied at start by `serve --db postgres://…`.
    expect(files).toContain("package/drizzle-pg/meta/_journal.json");
    expect(files.some((f) => f.startsWith("package/drizzle-pg/") && f.endsWith(".sql"))).toBe(true);
    expect(files.filter((f) => f.endsWith(".test.ts"))).toEqual([]);
    expect(files).not.toContain("package/tsconfig.build.json");
  });

  it("serves with npx ./edgegym-x.y.z.tgz outside the checkout", async () => {
    const cwd = join(work, "npx");
    mkdirSync(cwd);
    // As a user types it: a relative path (npx takes an absolute one for a command to run).
    copyFileSync(tarball, join(cwd, basename(tarball)));
    const port = await freePort();
    const server = await startChildServer({ command: "sh", args: ["-c", `cd "${cwd}" && exec npx --yes "./${basename(tarball)}" serve --port ${port} --db :memory:`], env, healthUrl: `http://127.0.0.1:${port}/health`, startTimeoutMs: 150_000 });
    try {
      const envs = (await (await fetch(`http://127.0.0.1:${port}/v1/envs`)).json()) as { envs: { id: string }[] };
      expect(envs.envs.map((e) => e.id)).toContain("reverse-text");
    } finally {
      await server.stop();
    }
  }, 180_000);
});

describe("edgegym init, depending on the tarball", () => {
  const pkg = join(work, "my-env");

  beforeAll(() => {
    const init = spawnSync(process.execPath, [join(ROOT, "bin", "edgegym.js"), "init", pkg, "--edgegym", `file:${tarball}`], { env, encoding: "utf8" });
    expect(init.status, init.stderr).toBe(0);
    const installed = npm(["install"], pkg);
    expect(installed.status, installed.out).toBe(0);
    // Nothing for the user to approve: edgegym has no install-time script (npm 11 warns of one).
    expect(installed.out).not.toMatch(/install-scripts/);
  }, 240_000);

  it("scaffolds a package that passes its own tests out of the box", () => {
    expect(JSON.parse(readFileSync(join(pkg, "package.json"), "utf8")).dependencies).toEqual({ edgegym: `file:${tarball}` });
    const tested = npm(["test"], pkg, 60_000);
    expect(tested.out).toMatch(/# pass 4/);
    expect(tested.status, tested.out).toBe(0);
  }, 90_000);

  it("serves the new environment beside the built-ins with npm start", async () => {
    const port = await freePort();
    const server = await startChildServer({ command: "sh", args: ["-c", `cd "${pkg}" && exec npm start --silent -- --port ${port} --db :memory:`], env, healthUrl: `http://127.0.0.1:${port}/health` });
    try {
      const base = `http://127.0.0.1:${port}`;
      const ids = ((await (await fetch(`${base}/v1/envs`)).json()) as { envs: { id: string }[] }).envs.map((e) => e.id);
      expect(ids).toEqual(expect.arrayContaining(["my-env", "reverse-text"]));
      expect(await playRight(base, "my-env", "after")).toBe(1.2);
    } finally {
      await server.stop();
    }
  }, 60_000);

  it("runs on the Worker runtime with only its own environment (wrangler dev, local D1)", async () => {
    const wrangler = join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");
    const wenv = { ...env, WRANGLER_SEND_METRICS: "false", CI: "1" };
    const migrated = spawnSync(process.execPath, [wrangler, "d1", "migrations", "apply", "DB", "--local"], { cwd: pkg, env: wenv, encoding: "utf8", timeout: 60_000, input: "" });
    expect(migrated.status, `${migrated.stdout}\n${migrated.stderr}`).toBe(0);
    const port = await freePort();
    const server = await startChildServer({ command: "sh", args: ["-c", `cd "${pkg}" && exec "${process.execPath}" "${wrangler}" dev --ip 127.0.0.1 --port ${port}`], env: wenv, healthUrl: `http://127.0.0.1:${port}/health`, startTimeoutMs: 90_000 });
    try {
      const base = `http://127.0.0.1:${port}`;
      expect(((await (await fetch(`${base}/health`)).json()) as { runtime: string }).runtime).toBe("worker");
      const ids = ((await (await fetch(`${base}/v1/envs`)).json()) as { envs: { id: string }[] }).envs.map((e) => e.id);
      expect(ids).toEqual(["my-env"]);
      expect(await playRight(base, "my-env", "after")).toBe(1.2);
    } finally {
      await server.stop();
    }
  }, 150_000);
});
