import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { deployKeysDecision } from "../scripts/deploy-keys.js";

const root = fileURLToPath(new URL("..", import.meta.url));

describe("npm run deploy's API key check", () => {
  it("deploys with keys as a secret or a var, or with --public; refuses otherwise", () => {
    expect(deployKeysDecision({ public: false, vars: {}, secrets: { names: ["EDGEGYM_API_KEYS"] } }).deploy).toBe(true);
    expect(deployKeysDecision({ public: false, vars: { EDGEGYM_API_KEYS: "a,b" }, secrets: { error: "not logged in" } }).deploy).toBe(true);
    expect(deployKeysDecision({ public: true, vars: {}, secrets: { names: [] } }).deploy).toBe(true);
    expect(deployKeysDecision({ public: false, vars: {}, secrets: { names: ["EDGEGYM_ADMIN_API_KEYS"] } }).deploy).toBe(true);
    const none = deployKeysDecision({ public: false, vars: { EDGEGYM_API_KEYS: " , " }, secrets: { names: ["OTHER"] } });
    expect(none).toMatchObject({ deploy: false, reason: expect.stringMatching(/wrangler secret put EDGEGYM_API_KEYS.*--public/) });
    const unknown = deployKeysDecision({ public: false, vars: {}, secrets: { error: "You are not authenticated." } });
    expect(unknown).toMatchObject({ deploy: false, reason: expect.stringMatching(/not authenticated.*--public/) });
  });

  const dirs: string[] = [];
  afterEach(() => {
    while (dirs.length) rmSync(dirs.pop() as string, { recursive: true, force: true });
  });

  /** Runs scripts/deploy-worker.ts with a fake wrangler whose `secret list` prints `secrets` and whose `deploy` leaves a marker. */
  function deployWith(secrets: string, args: string[], env: Record<string, string> = {}) {
    const dir = mkdtempSync(join(tmpdir(), "edgegym-deploy-"));
    dirs.push(dir);
    const fake = join(dir, "wrangler");
    writeFileSync(fake, `#!/bin/sh\nif [ "$1" = secret ]; then echo '${secrets}'; exit 0; fi\necho "$@" > "${dir}/deployed"\n`);
    chmodSync(fake, 0o755);
    const run = spawnSync(process.execPath, [join(root, "node_modules/tsx/dist/cli.mjs"), "scripts/deploy-worker.ts", ...args], {
      cwd: root,
      encoding: "utf8",
      env: { ...process.env, EDGEGYM_WRANGLER: fake, ...env },
      timeout: 60_000,
    });
    const marker = join(dir, "deployed");
    return { ...run, deployedWith: existsSync(marker) ? readFileSync(marker, "utf8").trim() : undefined };
  }

  it("refuses a Worker without keys before wrangler deploy runs, and passes options through otherwise", () => {
    const refused = deployWith("[]", []);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/refusing to deploy: the Worker has no EDGEGYM_API_KEYS secret/);
    expect(refused.deployedWith).toBeUndefined();
    const open = deployWith("[]", ["--public", "--dry-run"]);
    expect([open.status, open.deployedWith]).toEqual([0, "deploy --dry-run"]);
    const keyed = deployWith('[{"name":"EDGEGYM_API_KEYS","type":"secret_text"}]', []);
    expect([keyed.status, keyed.deployedWith]).toEqual([0, "deploy"]);
  });

  it("deploys the Harbor build with EDGEGYM_HARBOR_TASKS: its own config, a container class per task image", () => {
    const env = { EDGEGYM_HARBOR_TASKS: join(root, "test/fixtures/harbor-tasks"), EDGEGYM_WORKER_NAME: "edgegym-deploy-test", EDGEGYM_BOX_SERVER_IMAGE: "edgegym/box-server:current" };
    const run = deployWith("[]", ["--public", "--dry-run"], env);
    expect(run.status, run.stderr).toBe(0);
    const config = join(root, ".edgegym/worker-harbor-edgegym-deploy-test/wrangler.json");
    expect(run.deployedWith).toBe(`deploy --dry-run --config ${config}`);
    const written = JSON.parse(readFileSync(config, "utf8")) as { name: string; containers: { class_name: string; instance_type: string }[]; migrations: { new_sqlite_classes: string[] }[] };
    expect(written.name).toBe("edgegym-deploy-test");
    expect(written.containers.length).toBeGreaterThanOrEqual(5);
    expect(written.containers.every((c) => c.instance_type === "standard-2")).toBe(true);
    expect(written.migrations.at(-1)?.new_sqlite_classes).toEqual(written.containers.map((c) => c.class_name));
    expect(deployWith("[]", ["--public", "--config", "x.json"], env).status).toBe(2);
  });
});
