import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT, startNodeServer, type ChildServer } from "./support/node-server.js";

/*
 * The Python blocks of docs/ors.md, run as printed with openreward and TRL's adapter from the
 * pinned venv (scripts/ors-venv.sh) against a real server: only the address and the key
 * placeholder are swapped in. Skipped with a note without the venv, failed when
 * EDGEGYM_REQUIRE_ORS=1.
 */
const python = process.env.EDGEGYM_ORS_PYTHON ?? join(REPO_ROOT, "trainer-adapter/.venv-ors/bin/python");
const ready = existsSync(python);
if (!ready) {
  const why = `ors docs test: no ${python}; run bash scripts/ors-venv.sh`;
  if (process.env.EDGEGYM_REQUIRE_ORS === "1") throw new Error(why);
  console.warn(`${why} (skipping)`);
}

const blocks = [...readFileSync(join(REPO_ROOT, "docs/ors.md"), "utf8").matchAll(/```python\n([\s\S]*?)```/g)].map((m) => m[1] as string);

describe.skipIf(!ready)("docs/ors.md's client code", () => {
  let dir: string;
  let open: ChildServer;
  let keyed: ChildServer;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "edgegym-ors-docs-"));
    open = await startNodeServer({ db: join(dir, "open.db") });
    keyed = await startNodeServer({ db: join(dir, "keyed.db"), env: { EDGEGYM_API_KEYS: "docs:sk-docs" } });
  }, 90_000);
  afterAll(async () => {
    await Promise.all([open?.stop(), keyed?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  const run = (server: ChildServer, code: string): string[] => {
    const file = join(dir, "block.py");
    writeFileSync(file, code.replaceAll("http://localhost:8787", server.url).replaceAll("sk-your-key", "sk-docs"));
    const result = spawnSync(python, [file], {
      encoding: "utf8",
      timeout: 60_000,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", OPENREWARD_DISABLE_UPDATE_CHECK: "1", TRL_EXPERIMENTAL_SILENCE: "1" },
    });
    expect(result.status, `${result.stderr}\n${server.output()}`).toBe(0);
    return result.stdout.split("\n");
  };

  it("has the four scripts", () => {
    expect(blocks.map((b) => b.split("\n")[0])).toEqual([
      "# Splits, tasks and a single-turn episode (reverse-text).",
      "# Tools: a calculator call, its result, then the answer (tool-math).",
      "# TRL's ORS adapter (trl.experimental.openreward): one episode, as GRPOTrainer drives it.",
      "# A client that sends the server's API key (as X-API-Key; edgegym takes it beside Bearer).",
    ]);
  });

  it("runs each as printed and prints what its comments say", () => {
    const [single, tools, trl, key] = blocks as [string, string, string, string];
    expect(run(open, single).slice(0, 4)).toEqual(["['train', 'eval'] True", "{'split': 'train', 'index': 0}", "True 1.2", "lcs_ratio True"]);
    expect(run(open, tools).slice(0, 3)).toEqual(["['calculator', 'respond']", "5 False None", "True True"]);
    expect(run(open, trl)[0]).toBe("True [1.2]");
    expect(run(keyed, key)[0]).toBe("['train', 'eval']");
  }, 300_000);
});
