import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT, startNodeServer, type ChildServer } from "./support/node-server.js";

/*
 * The Python blocks of docs/openenv.md (but the TRL section's), run as printed with openenv-core from the pinned
 * venv (scripts/openenv-venv.sh) against a real server: only the address and the key
 * placeholder are swapped in. Skipped with a note without the venv, failed when
 * EDGEGYM_REQUIRE_OPENENV=1.
 */
const python = process.env.EDGEGYM_OPENENV_PYTHON ?? join(REPO_ROOT, "trainer-adapter/.venv-openenv/bin/python");
const ready = existsSync(python);
if (!ready) {
  const why = `openenv docs test: no ${python}; run bash scripts/openenv-venv.sh`;
  if (process.env.EDGEGYM_REQUIRE_OPENENV === "1") throw new Error(why);
  console.warn(`${why} (skipping)`);
}

// The TRL section's blocks ("# TRL: …") need TRL and torch: trainer-adapter/tests/test_trl_openenv.py runs them.
const blocks = [...readFileSync(join(REPO_ROOT, "docs/openenv.md"), "utf8").matchAll(/```python\n([\s\S]*?)```/g)]
  .map((m) => m[1] as string)
  .filter((block) => !block.startsWith("# TRL:"));

describe.skipIf(!ready)("docs/openenv.md's client code", () => {
  let dir: string;
  let open: ChildServer;
  let keyed: ChildServer;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "edgegym-openenv-docs-"));
    [open, keyed] = await Promise.all([
      startNodeServer({ db: join(dir, "open.db") }),
      startNodeServer({ db: join(dir, "keyed.db"), env: { EDGEGYM_API_KEYS: "docs:sk-docs" } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([open?.stop(), keyed?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  const run = (server: ChildServer, code: string): string[] => {
    const file = join(dir, "block.py");
    writeFileSync(file, code.replaceAll("http://localhost:8787", server.url).replaceAll("sk-your-key", "sk-docs"));
    const result = spawnSync(python, [file], { encoding: "utf8", timeout: 60_000 });
    expect(result.status, `${result.stderr}\n${server.output()}`).toBe(0);
    return result.stdout.split("\n");
  };

  it("has the four scripts", () => {
    expect(blocks.map((b) => b.split("\n")[0])).toEqual([
      "# A single-turn episode (reverse-text), then its state.",
      "# Tools: a calculator call, its result, the final answer.",
      "# A multi-turn game whose connection drops after the first move, continued on a new one.",
      "# A client that sends the server's API key.",
    ]);
  });

  it("runs each as printed and prints what its comments say", () => {
    const [single, tools, reconnect, key] = blocks as [string, string, string, string];
    const one = run(open, single);
    expect(one[0]).toBe("1.2 True");
    expect(one[2]).toMatch(/'step_count': 1/);
    const two = run(open, tools);
    expect(two[0]).toBe("[{'role': 'tool', 'tool_call_id': 'call_1', 'content': '5'}]");
    expect(two[1]).toMatch(/^True \d/);
    const three = run(open, reconnect);
    expect(three[0]).toBe("True 1");
    expect(three[1]).toMatch(/^(You win!|You lose\.|Draw).* \d/);
    expect(run(keyed, key)[0]).toMatch(/^ep_/);
  }, 120_000);
});
