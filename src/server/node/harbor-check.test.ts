import { describe, expect, it } from "vitest";
import type { SandboxListing, SandboxProvider } from "../../envs/sandbox/types.js";
import { formatCheckTable } from "./harbor-check-command.js";
import { STALE_CHECK_MS, sweepStaleChecks, type TaskCheck } from "./harbor-check.js";

describe("sweepStaleChecks", () => {
  it("removes check containers older than ten minutes and leaves younger ones (another run's, in progress)", async () => {
    const now = 1_000_000_000_000;
    const boxes: SandboxListing[] = [
      { id: "old", labels: { "edgegym.role": "check", "edgegym.check": "run-a" }, running: true, createdAtMs: now - STALE_CHECK_MS - 1 },
      { id: "young", labels: { "edgegym.role": "check", "edgegym.check": "run-b" }, running: true, createdAtMs: now - 60_000 },
    ];
    const destroyed: string[] = [];
    const asked: Readonly<Record<string, string>>[] = [];
    const provider = {
      list: async (labels: Readonly<Record<string, string>>) => {
        asked.push(labels);
        return boxes;
      },
      destroy: async (id: string) => {
        destroyed.push(id);
      },
    } as unknown as SandboxProvider;
    expect(await sweepStaleChecks(provider, now)).toBe(1);
    expect(destroyed).toEqual(["old"]);
    expect(asked).toEqual([{ "edgegym.role": "check" }]);
  });
});

describe("formatCheckTable", () => {
  it("prints the reward or the failure's code, the oracle's exit, the seconds and the CTRF counts", () => {
    const base: TaskCheck = { task: "a", reward: 1, failure: null, oracle: { exitCode: 0, timedOut: false }, seconds: 2.34, tests: { passed: 6, failed: 0 }, logs: null };
    const table = formatCheckTable([
      base,
      { ...base, task: "org/slow", reward: null, failure: { code: "verifier_timeout", message: "…" }, tests: null },
      { ...base, task: "half", reward: 0.5, oracle: { exitCode: null, timedOut: true } },
      { ...base, task: "broken", reward: null, failure: { code: "sandbox_build_failed", message: "…" }, oracle: null, tests: null },
    ]);
    expect(table.split("\n")).toEqual([
      "task      result                oracle   seconds  tests passed/failed",
      "a         1                     0        2.3      6/0",
      "org/slow  verifier_timeout      0        2.3      -",
      "half      0.5                   timeout  2.3      6/0",
      "broken    sandbox_build_failed  -        2.3      -",
    ]);
  });
});
