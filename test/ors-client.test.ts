import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT, startNodeServer, type ChildServer } from "./support/node-server.js";

/*
 * The `openreward` package's own client against edgegym's ORS wire, on the real Node server:
 * reverse-text (single turn), tic-tac-toe (multi-turn, through a variant and a task_spec with
 * args) and tool-math (a tool, then the answer; a cut call resumed with its task id), errors as
 * the client raises them, then one episode through TRL 1.16's ORS adapter
 * (test/ors/drive_ors.py). The venv comes from scripts/ors-venv.sh (openreward 0.1.167 and
 * trl 1.16.0 from PyPI), which `npm test` runs first; without it this is skipped with a note,
 * and failed when EDGEGYM_REQUIRE_ORS=1.
 */
const python = process.env.EDGEGYM_ORS_PYTHON ?? join(REPO_ROOT, "trainer-adapter/.venv-ors/bin/python");
const ready = existsSync(python);
if (!ready) {
  const why = `ors client test: no ${python}; run bash scripts/ors-venv.sh`;
  if (process.env.EDGEGYM_REQUIRE_ORS === "1") throw new Error(why);
  console.warn(`${why} (skipping)`);
}

async function drive(url: string, key?: string): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(python, [join(REPO_ROOT, "test/ors/drive_ors.py"), url, ...(key ? [key] : [])], {
    stdio: ["ignore", "pipe", "pipe"],
    // No variable of the developer's shell may point the client elsewhere (or carry a key).
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", OPENREWARD_DISABLE_UPDATE_CHECK: "1" },
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  return { code, out, err };
}

describe.skipIf(!ready)("the openreward client against the ORS wire", () => {
  let dir: string;
  let open: ChildServer;
  let keyed: ChildServer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "edgegym-ors-"));
    open = await startNodeServer({ db: join(dir, "open.db") });
    keyed = await startNodeServer({ db: join(dir, "keyed.db"), env: { EDGEGYM_API_KEYS: "alice:sk-alice" } });
  }, 90_000);
  afterAll(async () => {
    await Promise.all([open?.stop(), keyed?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it("plays reverse-text, tic-tac-toe and tool-math, resumes a call, and runs one episode through TRL's adapter", async () => {
    const run = await drive(open.url);
    expect(run.code, `${run.err}\n${open.output()}`).toBe(0);
    const seen = JSON.parse(run.out.trim().split("\n").at(-1) ?? "{}");
    expect(seen).toMatchObject({ reverse_text_reward: 1.2, tool_math_reward: 1.1, errors: "ok", trl_reward: 1.2 });
    expect(seen.tic_tac_toe.last).toMatch(/You win|You lose|draw/i);
  }, 120_000);

  it("does the same with an API key, which the client sends as X-API-Key", async () => {
    const run = await drive(keyed.url, "sk-alice");
    expect(run.code, `${run.err}\n${keyed.output()}`).toBe(0);
  }, 120_000);

  it("refuses every route without the key, in the wire's error shape", async () => {
    for (const path of ["/list_environments", "/reverse-text/splits"]) {
      const res = await fetch(`${keyed.url}${path}`);
      expect(res.status).toBe(401);
      expect(((await res.json()) as { detail: string; code: string }).code).toBe("unauthorized");
    }
    const create = await fetch(`${keyed.url}/create_session`, { method: "POST" });
    expect(create.status).toBe(401);
  });
});
