import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "./support/cli-process.js";
import { containersWith, dockerReady } from "./support/docker.js";
import { REPO_ROOT } from "./support/node-server.js";

/*
 * `edgegym harbor check DIR` as a process, on a real Docker daemon: edgegym's five fixture
 * tasks (test/fixtures/harbor-tasks) each run by their oracle, then their tests; the exit
 * code task authors gate CI on; Ctrl-C; and no check container left behind.
 */

const FIXTURES = join(REPO_ROOT, "test/fixtures/harbor-tasks");
const CHECK_LABEL = "edgegym.role=check";
const ready = dockerReady();

/** The printed table, by task (a name's last part: `edgegym/count-errors` → `count-errors`). */
function tableRows(stdout: string): Map<string, { result: string; oracle: string; seconds: string; tests: string }> {
  const lines = stdout.split("\n");
  const header = lines.findIndex((line) => /^task\s+result\s+oracle\s+seconds\s+tests/.test(line));
  expect(header, stdout).toBeGreaterThanOrEqual(0);
  const rows = new Map<string, { result: string; oracle: string; seconds: string; tests: string }>();
  for (const line of lines.slice(header + 1)) {
    if (!line.trim()) break;
    const [task, result, oracle, seconds, tests] = line.trim().split(/\s{2,}/);
    rows.set(String(task).split("/").pop() as string, { result: String(result), oracle: String(oracle), seconds: String(seconds), tests: String(tests) });
  }
  return rows;
}

describe("edgegym harbor check: usage", () => {
  const empty = mkdtempSync(join(tmpdir(), "edgegym-harbor-empty-"));
  afterAll(() => rmSync(empty, { recursive: true, force: true }));

  it("exits 2 without DIR, on an unknown task or a bad --jobs, and when DIR holds no task", async () => {
    const runs = [
      { args: ["harbor", "check"], says: /DIR is missing/ },
      { args: ["harbor", "check", FIXTURES, "--task", "no-such-task"], says: /no task named "no-such-task"; tasks: edgegym\/count-errors/ },
      { args: ["harbor", "check", FIXTURES, "--jobs", "0"], says: /--jobs must be a whole number/ },
      { args: ["harbor", "check", empty], says: /holds no Harbor task/ },
    ].map(({ args, says }) => ({ run: runCli(args), says }));
    for (const { run, says } of runs) {
      expect(await run.exit, run.stderr()).toBe(2);
      expect(run.stderr()).toMatch(says);
    }
  }, 60_000);
});

describe.skipIf(!ready)("edgegym harbor check on Docker", () => {
  afterAll(() => {
    // Whatever a failed test left, so the machine stays clean; each test checks that nothing was left.
    for (const id of containersWith(CHECK_LABEL)) execFileSync("docker", ["rm", "-f", id], { stdio: "ignore" });
  });

  it("runs every task's oracle then its tests: three score 1, the wrong oracle 0, the slow verifier verifier_timeout; exit 1", async () => {
    const run = runCli(["harbor", "check", FIXTURES]);
    const code = await run.exit;
    const rows = tableRows(run.stdout());
    console.log(run.stdout());
    expect(code, run.stderr()).toBe(1);
    expect([...rows.keys()].sort()).toEqual(["count-errors", "fix-median", "offline-report", "slow-verifier", "wrong-oracle"]);
    for (const task of ["count-errors", "fix-median", "offline-report"]) expect(rows.get(task)?.result, task).toBe("1");
    expect(rows.get("wrong-oracle")?.result).toBe("0");
    expect(rows.get("slow-verifier")?.result).toBe("verifier_timeout");
    for (const row of rows.values()) {
      expect(row.oracle).toBe("0");
      expect(Number(row.seconds)).toBeGreaterThan(0);
    }
    // fix-median and offline-report write a CTRF report; count-errors does not.
    expect(rows.get("fix-median")?.tests).toMatch(/^\d+\/0$/);
    expect(rows.get("offline-report")?.tests).toBe("2/0");
    expect(rows.get("count-errors")?.tests).toBe("-");
    // Why the two did not score 1, under the table; and one progress line per finished task (stderr is not a terminal).
    expect(run.stdout()).toMatch(/wrong-oracle: reward 0, not 1[\s\S]*answer: '381' \(expected 391\)/);
    expect(run.stdout()).toMatch(/edgegym\/slow-verifier: verifier_timeout: /);
    expect(run.stdout()).toMatch(/3\/5 tasks: the oracle scored reward 1 \(2 did not\)/);
    expect(run.stderr().match(/^\[\d\/5\] /gm)).toHaveLength(5);
    expect(containersWith(CHECK_LABEL)).toEqual([]);
  }, 300_000);

  it("checks only the tasks named by --task, and exits 0 when each scored 1", async () => {
    const run = runCli(["harbor", "check", FIXTURES, "--task", "count-errors"]);
    expect(await run.exit, `${run.stdout()}\n${run.stderr()}`).toBe(0);
    const rows = tableRows(run.stdout());
    expect([...rows.keys()]).toEqual(["count-errors"]);
    expect(rows.get("count-errors")?.result).toBe("1");
    expect(containersWith(CHECK_LABEL)).toEqual([]);
  }, 180_000);

  it("Ctrl-C removes the containers in flight, then exits 130", async () => {
    const run = runCli(["harbor", "check", FIXTURES, "--jobs", "3", "--task", "slow-verifier", "--task", "fix-median", "--task", "wrong-oracle"]);
    // Wait until the run holds containers, then interrupt it.
    const deadline = Date.now() + 120_000;
    while (containersWith(CHECK_LABEL).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(containersWith(CHECK_LABEL).length).toBeGreaterThan(0);
    run.child.kill("SIGINT");
    expect(await run.exit, run.stderr()).toBe(130);
    expect(run.stderr()).toMatch(/interrupted: \d\/3 tasks checked/);
    expect(containersWith(CHECK_LABEL)).toEqual([]);
  }, 180_000);
});
