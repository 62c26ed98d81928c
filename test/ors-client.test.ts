import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "./support/node-server.js";
import { lastJsonLine, pinnedVenvPython, runPython, serverPair, type PythonRun } from "./support/python-client.js";

/*
 * The `openreward` package's own client against edgegym's ORS wire, on the real Node server:
 * reverse-text (single turn), tic-tac-toe (multi-turn, through a variant and a task_spec with
 * args) and tool-math (a tool, then the answer; a cut call resumed with its task id), group scoring
 * on a session, three calls sent at once on one session (queued, each its own turn), kuhn-poker's
 * p2 seat against nash (task_spec.seats; p1's card never shown before a showdown) and self-play
 * refused, errors as the client raises them, then one episode through TRL 1.16's ORS adapter
 * (test/ors/drive_ors.py). The venv comes from scripts/ors-venv.sh (openreward 0.1.167 and
 * trl 1.16.0 from PyPI), which `npm test` runs first; without it this is skipped with a note,
 * and failed when EDGEGYM_REQUIRE_ORS=1.
 */
const { python, ready } = pinnedVenvPython({ name: "ors", envVar: "ORS" }, "ors client test");

// No variable of the developer's shell may point the client elsewhere (or carry a key).
const drive = (url: string, key?: string): Promise<PythonRun> =>
  runPython(python, [join(REPO_ROOT, "test/ors/drive_ors.py"), url, ...(key ? [key] : [])], { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", OPENREWARD_DISABLE_UPDATE_CHECK: "1" });

describe.skipIf(!ready)("the openreward client against the ORS wire", () => {
  // The built-in environments and test-slow-tool, whose tool holds a step open while other calls arrive.
  const servers = serverPair("edgegym-ors-", "alice:sk-alice", ["--env", join(REPO_ROOT, "test/fixtures/slow-tool-env.js")]);

  it("plays reverse-text, tic-tac-toe and tool-math, resumes a call, scores a group, queues calls sent at once, and runs one episode through TRL's adapter", async () => {
    const run = await drive(servers.open.url);
    expect(run.code, `${run.err}\n${servers.open.output()}`).toBe(0);
    const seen = lastJsonLine(run.out);
    expect(seen).toMatchObject({ reverse_text_reward: 1.2, tool_math_reward: 1.1, score_group: [1.2, expect.any(Number)], concurrent_turns: [1, 2, 3], errors: "ok", trl_reward: 1.2, ors_self_play: "refused" });
    expect(seen.kuhn_poker_p2_reward).toEqual(expect.any(Number));
    expect(seen.tic_tac_toe?.last).toMatch(/You win|You lose|draw/i);
  }, 120_000);

  it("does the same with an API key, which the client sends as X-API-Key", async () => {
    const run = await drive(servers.keyed.url, "sk-alice");
    expect(run.code, `${run.err}\n${servers.keyed.output()}`).toBe(0);
  }, 120_000);

  it("refuses every route without the key, in the wire's error shape", async () => {
    const { keyed } = servers;
    for (const path of ["/list_environments", "/reverse-text/splits"]) {
      const res = await fetch(`${keyed.url}${path}`);
      expect(res.status).toBe(401);
      expect(((await res.json()) as { detail: string; code: string }).code).toBe("unauthorized");
    }
    const create = await fetch(`${keyed.url}/create_session`, { method: "POST" });
    expect(create.status).toBe(401);
  });
});
