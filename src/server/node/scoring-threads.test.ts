import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { envContentHash } from "../../envs/content-hash.js";
import { scoreRubric, scoreRubricGroup, type RewardInputs } from "../../envs/rubric.js";
import type { AnyEnvironment } from "../../envs/types.js";
import { scoreFailure, type Score } from "../../protocol/index.js";
import { loadEnvModules } from "../../envs/load-env-modules.node.js";
import { ScoringThreads } from "./scoring-threads.js";

/**
 * A `--env` module of environments as plain objects (no import of edgegym, so the thread
 * loads it as is): rewards that loop forever, hang, exit the thread, count their calls in
 * the thread, or read the operator's services.
 */
const MODULE = `
const base = (id, rewards) => ({
  id, version: "1", kind: "single", runtimes: ["node"], parser: { name: "plain" },
  setup: () => ({ state: {}, messages: [] }), respond: (s) => ({ state: s, messages: [] }),
  rubric: { rewards },
});
export const looping = base("looping", [
  { name: "fine", weight: 0.5, fn: () => 1 },
  { name: "forever", weight: 1, fn: () => { for (;;) {} } },
]);
export const hanging = base("hanging", [{ name: "judge", weight: 1, fn: () => new Promise(() => {}) }]);
export const exiting = base("exiting", [{ name: "exit", weight: 1, fn: () => process.exit(3) }]);
export const counting = base("counting", [
  { name: "calls", weight: 1, fn: () => (globalThis.calls = (globalThis.calls ?? 0) + 1) },
  { name: "answer", weight: 0, fn: ({ answer, parser }) => (answer === "42" && parser.name === "plain" ? 1 : 0) },
]);
export const slow = base("slow", [{ name: "slow", weight: 1, fn: () => new Promise((r) => setTimeout(() => r(0.5), 150)) }]);
export const judged = {
  ...base("judged", [{ name: "judge", weight: 1, fn: () => 0 }]),
  withServices: (services) => base("judged", [{ name: "judge", weight: 1, fn: () => services.judges.judges.length }]),
};
`;

const BUDGET_MS = 400;
let envs: Map<string, AnyEnvironment>;
let originals: Map<string, AnyEnvironment>;
let threads: ScoringThreads;

const inputs = (answer = "42"): RewardInputs<unknown> => ({
  prompt: [{ role: "user", content: "q" }],
  completion: [{ role: "assistant", content: "a" }],
  answer,
  info: {},
  state: null,
  parser: { name: "main-thread" } as unknown as RewardInputs<unknown>["parser"],
  task: { prompt: "q", answer },
});

const env = (id: string): AnyEnvironment => envs.get(id) as AnyEnvironment;

/** The longest the main thread's event loop went without running a 10 ms timer while `work` ran. */
async function longestStall<T>(work: Promise<T>): Promise<{ value: T; stallMs: number }> {
  let last = performance.now();
  let stallMs = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  }, 10);
  try {
    return { value: await work, stallMs };
  } finally {
    clearInterval(tick);
  }
}

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "edgegym-scoring-threads-"));
  writeFileSync(join(dir, "envs.mjs"), MODULE);
  // A real environment too (a built-in, loaded the way --env loads one): it has a content hash.
  const builtin = pathToFileURL(join(import.meta.dirname, "../../envs/builtin/reverse-text/index.ts")).href;
  writeFileSync(join(dir, "real.mjs"), `export { reverseText } from ${JSON.stringify(builtin)};\n`);
  const loaded = await loadEnvModules(["./envs.mjs", "./real.mjs"], dir);
  threads = new ScoringThreads({ budgetMs: BUDGET_MS });
  originals = new Map(loaded.map((e) => [e.id, e]));
  envs = new Map(loaded.map((e) => [e.id, threads.isolate(e)]));
  // The first job starts the thread (under tsx here); warm it so timings below are the scoring's own.
  await scoreRubric(env("counting").rubric, inputs());
}, 30_000);

afterAll(async () => {
  await threads.close();
});

describe("ScoringThreads", () => {
  it("answers a reward function that loops forever with score_timeout within the budget, the server's thread free meanwhile", async () => {
    const started = performance.now();
    const { value: score, stallMs } = await longestStall(scoreRubric(env("looping").rubric, inputs()));
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(BUDGET_MS - 20);
    expect(elapsed).toBeLessThan(BUDGET_MS + 2_000);
    expect(stallMs).toBeLessThan(200);
    expect(score.reward).toBe(0);
    expect(score.components.map((c) => [c.name, c.weight, c.score])).toEqual([
      ["fine", 0.5, 0],
      ["forever", 1, 0],
    ]);
    for (const c of score.components) expect(c.error).toMatch(/^score_timeout: scoring ran past its time budget of 0\.4 s \(EDGEGYM_SCORE_TIMEOUT_SECONDS\)$/);
    expect(scoreFailure(score)?.code).toBe("score_timeout");
  });

  it("stops the stuck thread: the module's next rollout scores on a fresh one", async () => {
    await scoreRubric(env("looping").rubric, inputs());
    // A fresh thread's module counts from 1 again.
    const score = await scoreRubric(env("counting").rubric, inputs());
    expect(score.components).toEqual([
      { name: "calls", weight: 1, score: 1 },
      { name: "answer", weight: 0, score: 1 },
    ]);
    expect(score.metrics).toEqual({ answer: 1 });
  });

  it("sends rollouts that waited behind a loop to the next thread, where they score as usual", async () => {
    const [looped, waited] = await Promise.all([scoreRubric(env("looping").rubric, inputs()), scoreRubric(env("slow").rubric, inputs())]);
    expect(scoreFailure(looped)?.code).toBe("score_timeout");
    expect(waited).toEqual({ reward: 0.5, components: [{ name: "slow", weight: 1, score: 0.5 }], metrics: {} });
  });

  it("answers a reward function that never settles with score_timeout, and keeps the thread, which still answers", async () => {
    const before = (await scoreRubric(env("counting").rubric, inputs())).components[0]?.score as number;
    const hung = await scoreRubric(env("hanging").rubric, inputs());
    expect(hung.components[0]?.error).toMatch(/^score_timeout: /);
    await new Promise((r) => setTimeout(r, BUDGET_MS + 200));
    const after = (await scoreRubric(env("counting").rubric, inputs())).components[0]?.score as number;
    expect(after).toBe(before + 1);
  });

  it("gives a group scored together the budget once per member", async () => {
    const scores = await scoreRubricGroup(env("looping").rubric, [inputs(), inputs()]);
    expect(scores).toHaveLength(2);
    for (const s of scores as Score[]) expect(s.components[1]?.error).toMatch(/^score_timeout: scoring ran past its time budget of 0\.8 s \(0\.4 s per rollout, EDGEGYM_SCORE_TIMEOUT_SECONDS\)$/);
  });

  it("reports a thread that exits under a reward function as a failed score, and carries on", async () => {
    const score = await scoreRubric(env("exiting").rubric, inputs());
    expect(score.reward).toBe(0);
    expect(score.components[0]?.error).toMatch(/^scoring failed: the scoring thread exited \(code 3\)$/);
    expect(scoreFailure(score)).toBeNull();
    expect((await scoreRubric(env("counting").rubric, inputs())).components[1]?.score).toBe(1);
  });

  it("binds the operator's services in the thread as the server binds them", async () => {
    const bound = env("judged").withServices?.({ judges: { judges: [{ name: "a", baseURL: "http://127.0.0.1:1", models: ["m"] }], defaultJudge: "a" } }) as AnyEnvironment;
    expect((await scoreRubric(bound.rubric, inputs())).components[0]?.score).toBe(1);
    expect((await scoreRubric(env("judged").rubric, inputs())).components[0]?.score).toBe(0);
  });

  it("scores a real environment in its thread as it scores in this one, and keeps its content hash", async () => {
    const reverse = originals.get("reverse-text") as AnyEnvironment;
    const item = { ...inputs(), completion: [{ role: "assistant" as const, content: "<answer>cba</answer>" }], answer: "cba", parser: reverse.parser };
    const inThread = await scoreRubric(env("reverse-text").rubric, item);
    expect(inThread).toEqual(await scoreRubric(reverse.rubric, item));
    expect(inThread.reward).toBeGreaterThan(1);
    expect(await envContentHash(env("reverse-text"))).toBe(await envContentHash(reverse));
  });

  it("leaves environments not loaded from a module as they are", () => {
    const inline = { ...(originals.get("counting") as AnyEnvironment) };
    expect(threads.isolate(inline)).toBe(inline);
  });
});
