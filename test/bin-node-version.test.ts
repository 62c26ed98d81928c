import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const bin = fileURLToPath(new URL("../bin/edgegym.js", import.meta.url));
// The machines ship Node 20 as /usr/bin/node (TOOLCHAIN.md); the test runs it when it is older than 22.
const oldNode = "/usr/bin/node";
const oldMajor = existsSync(oldNode) ? Number(execFileSync(oldNode, ["-p", "process.versions.node.split('.')[0]"], { encoding: "utf8" }).trim()) : Infinity;

describe("bin/edgegym.js on an old Node", () => {
  it.skipIf(!(oldMajor < 22))("says which Node it needs and exits 78 before loading anything native", () => {
    const run = spawnSync(oldNode, [bin, "serve", "--port", "0", "--db", ":memory:"], { encoding: "utf8", timeout: 20_000 });
    expect(run.status).toBe(78);
    expect(run.signal).toBeNull();
    expect(run.stderr).toMatch(/edgegym needs Node\.js 22\.3 or newer; this is Node 20\./);
    expect(run.stdout).toBe("");
  });

  it("runs the CLI on this Node", () => {
    const run = spawnSync(process.execPath, [bin, "--help"], { encoding: "utf8", timeout: 20_000 });
    expect(run.stdout + run.stderr).toMatch(/edgegym serve/);
  });
});
