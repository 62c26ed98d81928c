import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { defineRubric, EnvRegistry, type AnyEnvironment } from "../../envs/index.js";
import { EvalRequest, EvalRollout } from "../../protocol/index.js";
import { bisectingPlayer, guessNumber } from "../../../test/support/eval-envs.js";
import { startScriptedModel, type ScriptedPolicy } from "../../../test/support/scripted-model.js";
import { evalToDir } from "./eval-to-dir.js";
import { formatRescoreReport, rescoreRunDir } from "./rescore-command.js";
import { withFlatTiming, type VfFormat } from "../vf-formats.js";
import { readResults, RESULTS_FILE, TRACES_FILE } from "./run-dir.js";

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()?.();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "edgegym-rescore-"));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A run directory made by `edgegym eval` (in-process) of guess-number, whose rubric reads the game state. */
async function guessRun(policy: ScriptedPolicy = bisectingPlayer, maxRetries = 3, format?: VfFormat): Promise<string> {
  const server = await startScriptedModel(policy);
  cleanup.push(() => server.close());
  const result = await evalToDir({
    request: { ...EvalRequest.parse({ env_id: "guess-number", num_examples: 3, rollouts_per_example: 2, max_concurrent: 4, max_retries: maxRetries }), model: "org/scripted" },
    baseUrl: server.baseUrl,
    registry: new EnvRegistry("node", [guessNumber]),
    outputBase: tempDir(),
    retryBaseDelayMs: 1,
    ...(format ? { format } : {}),
  });
  return result.runDir;
}

/** guess-number 1.1.0: solving is worth 2, and a new metric-only component counts guesses. */
const guessNumberV2: AnyEnvironment = {
  ...guessNumber,
  version: "1.1.0",
  rubric: defineRubric<{ secret: number; guesses: number; solved: boolean }>([
    { name: "solved", weight: 2, fn: ({ state }) => Number(state?.solved ?? false) },
    { name: "few_guesses", weight: 0, fn: ({ state }) => (state ? 1 / state.guesses : 0) },
  ]),
};

const fixedNow = new Date("2026-11-24T12:00:00Z");

describe("edgegym rescore", () => {
  it("rescores a run with the rubric as it is now, replaying the game state, into a new file beside the old one", async () => {
    const dir = await guessRun();
    const original = readFileSync(join(dir, RESULTS_FILE), "utf8");
    const same = await rescoreRunDir({ runDir: dir, registry: new EnvRegistry("node", [guessNumber]), now: fixedNow });
    expect(same).toMatchObject({ rescored: 6, skipped: 0, changed: 0, replay: { matched: 6, diverged: 0, off: 0, failed: 0 } });
    expect(same.output).toBe(join(dir, "results.rescored-20261124T120000Z.jsonl"));
    expect(same.after.reward.mean).toBe(1);
    expect(same.before.reward.mean).toBe(1);

    const v2 = await rescoreRunDir({ runDir: dir, registry: new EnvRegistry("node", [guessNumberV2]), now: new Date("2026-11-24T12:00:01Z") });
    expect(v2).toMatchObject({ rescored: 6, changed: 6, runVersion: { env_version: "1.0.0" }, nowVersion: { env_version: "1.1.0" } });
    expect(v2.after.reward.mean).toBe(2);
    const { rows } = await readResults<EvalRollout>(v2.output);
    expect(rows).toHaveLength(6);
    for (const row of rows) {
      EvalRollout.parse(withFlatTiming(row));
      expect(row).toMatchObject({ reward: 2, rescore: { previous_reward: 1, env_version: "1.1.0", replay: "matched" } });
      expect(row.metrics.few_guesses).toBeGreaterThan(0);
      // The old top-level metric copy is gone, the new one is there.
      expect(row).not.toHaveProperty("guesses");
      expect(row.few_guesses).toBe(row.metrics.few_guesses);
    }
    // The source is untouched; both new files sit beside it.
    expect(readFileSync(join(dir, RESULTS_FILE), "utf8")).toBe(original);
    expect(readdirSync(dir).sort()).toEqual([
      "metadata.json",
      "metadata.rescored-20261124T120000Z.json",
      "metadata.rescored-20261124T120001Z.json",
      "results.jsonl",
      "results.rescored-20261124T120000Z.jsonl",
      "results.rescored-20261124T120001Z.jsonl",
    ]);
    const meta = JSON.parse(readFileSync(v2.metadataOutput, "utf8"));
    expect(meta).toMatchObject({ avg_reward: 2, version_info: { env_version: "1.1.0", env_hash: v2.nowVersion.env_hash }, rescore: { previous_avg_reward: 1, rescored: 6, changed: 6, results: "results.rescored-20261124T120001Z.jsonl" } });

    const report = formatRescoreReport(v2);
    expect(report).toContain("guess-number 1.0.0");
    expect(report).toMatch(/→ 1\.1\.0 \(sha256:/);
    expect(report).toMatch(/reward\s+1\.000\s+2\.000\s+\+1\.000/);
    expect(report).toMatch(/few_guesses\s+–\s+\d\.\d{3}\s+new\/gone/);
  });

  it("never overwrites: the same output name again is an error, and nothing is written", async () => {
    const dir = await guessRun();
    const registry = new EnvRegistry("node", [guessNumber]);
    await rescoreRunDir({ runDir: dir, registry, now: fixedNow });
    const before = readFileSync(join(dir, "results.rescored-20261124T120000Z.jsonl"), "utf8");
    await expect(rescoreRunDir({ runDir: dir, registry, now: fixedNow })).rejects.toThrow(/already exists; rescoring never overwrites/);
    await expect(rescoreRunDir({ runDir: dir, registry, output: join(dir, RESULTS_FILE) })).rejects.toThrow(/already exists/);
    expect(readFileSync(join(dir, "results.rescored-20261124T120000Z.jsonl"), "utf8")).toBe(before);
  });

  it("without replay the rubric gets no state, which is why replay is the default", async () => {
    const dir = await guessRun();
    const off = await rescoreRunDir({ runDir: dir, registry: new EnvRegistry("node", [guessNumber]), replay: false, now: fixedNow });
    expect(off).toMatchObject({ replay: { off: 6 }, changed: 6 });
    expect(off.after.reward.mean).toBe(0);
  });

  it("scores with no state when the environment no longer replays the transcript, and says so", async () => {
    const dir = await guessRun();
    const moved: AnyEnvironment = { ...guessNumber, version: "2.0.0", systemPrompt: "A new prompt." };
    const result = await rescoreRunDir({ runDir: dir, registry: new EnvRegistry("node", [moved]), now: fixedNow });
    expect(result.replay).toMatchObject({ diverged: 6, matched: 0 });
    expect(formatRescoreReport(result)).toContain("replay       diverged 6");
  });

  it("keeps failed rollouts as they were", async () => {
    const dir = await guessRun((req, n) => (n % 4 === 1 ? { status: 400, message: "bad" } : bisectingPlayer(req, n)), 0);
    const { rows: source } = await readResults<EvalRollout>(join(dir, RESULTS_FILE));
    const failed = source.filter((r) => r.error).length;
    expect(failed).toBeGreaterThan(0);
    const result = await rescoreRunDir({ runDir: dir, registry: new EnvRegistry("node", [guessNumber]), now: fixedNow });
    expect(result.skipped).toBe(failed);
    const { rows } = await readResults<EvalRollout>(result.output);
    expect(rows.filter((r) => r.error)).toEqual(source.filter((r) => r.error));
  });

  it("rescores a run written as verifiers 0.4 episodes (--format vf04), leaving traces.jsonl untouched", async () => {
    const dir = await guessRun(bisectingPlayer, 3, "vf04");
    const original = readFileSync(join(dir, TRACES_FILE), "utf8");
    const v2 = await rescoreRunDir({ runDir: dir, registry: new EnvRegistry("node", [guessNumberV2]), now: fixedNow });
    expect(v2).toMatchObject({ rescored: 6, changed: 6, replay: { matched: 6 } });
    expect(v2.after.reward.mean).toBe(2);
    const { rows } = await readResults<EvalRollout>(v2.output);
    expect(rows).toHaveLength(6);
    for (const row of rows) EvalRollout.parse(row);
    expect(readFileSync(join(dir, TRACES_FILE), "utf8")).toBe(original);
    expect(JSON.parse(readFileSync(v2.metadataOutput, "utf8")).rescore.source).toBe(TRACES_FILE);
  });

  it("says what is wrong with a directory that is not a run", async () => {
    const registry = new EnvRegistry("node", [guessNumber]);
    const empty = tempDir();
    await expect(rescoreRunDir({ runDir: join(empty, "nope"), registry })).rejects.toThrow(/does not exist/);
    writeFileSync(join(empty, "file.txt"), "x");
    await expect(rescoreRunDir({ runDir: join(empty, "file.txt"), registry })).rejects.toThrow(/is not a directory/);
    await expect(rescoreRunDir({ runDir: empty, registry })).rejects.toThrow(/has no results\.jsonl or traces\.jsonl: not a run directory/);
    writeFileSync(join(empty, RESULTS_FILE), "");
    await expect(rescoreRunDir({ runDir: empty, registry })).rejects.toThrow(/has no metadata\.json/);
    writeFileSync(join(empty, "metadata.json"), "{not json");
    await expect(rescoreRunDir({ runDir: empty, registry })).rejects.toThrow(/metadata\.json is not valid JSON/);
    writeFileSync(join(empty, "metadata.json"), JSON.stringify({ env_id: "guess-number", split: "train" }));
    await expect(rescoreRunDir({ runDir: empty, registry })).rejects.toThrow(/holds no rollouts/);
    writeFileSync(join(empty, "metadata.json"), JSON.stringify({ env_id: "other", split: "train" }));
    await expect(rescoreRunDir({ runDir: empty, registry })).rejects.toThrow(/no environment "other" here.*--env-module/);
    writeFileSync(join(empty, "metadata.json"), JSON.stringify({ model: "x" }));
    await expect(rescoreRunDir({ runDir: empty, registry })).rejects.toThrow(/does not name the run's env_id and split/);
    writeFileSync(join(empty, "metadata.json"), JSON.stringify({ env_id: "guess-number", split: "train" }));
    writeFileSync(join(empty, RESULTS_FILE), '{"a":1}\nnot json\n{"b":2}\n');
    await expect(rescoreRunDir({ runDir: empty, registry })).rejects.toThrow(/line 2 is not valid JSON/);
    writeFileSync(join(empty, RESULTS_FILE), '{"example_id":0,"prompt":"not a list"}\n');
    await expect(rescoreRunDir({ runDir: empty, registry })).rejects.toThrow(/rollout 1 is not an edgegym rollout/);
    expect(readdirSync(empty).filter((name) => name.includes("rescored"))).toEqual([]);
  });
});
