import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuiltDist, ROOT } from "./support/built-dist.js";
import { http, startNodeServer, type ChildServer } from "./support/node-server.js";

/**
 * A custom environment as an author writes one (a .ts module importing edgegym, served with
 * `--env`) whose reward function loops forever when the answer is "loop". Before scoring had
 * a time budget, POST /score on such an episode never answered and the loop held the
 * server's only thread: /health and every other request stopped with it.
 */
const MODULE = `
import { defineRubric, formatReward, rowsDataset, singleTurnEnv, XmlParser } from "edgegym";

export const capitals = singleTurnEnv({
  id: "capitals-loop",
  version: "1.0.0",
  description: "Name the capital; the rubric loops on 'loop'.",
  parser: new XmlParser({ fields: ["answer"] }),
  dataset: rowsDataset({ train: [{ prompt: "What is the capital of France?", answer: "Paris" }] }),
  rubric: defineRubric([
    {
      name: "correct",
      weight: 1,
      fn: ({ completion, answer, parser }) => {
        const said: string | undefined = parser.parseAnswer(completion);
        if (said === "loop") for (;;) {}
        return Number(said === answer);
      },
    },
    formatReward({ weight: 0.2 }),
  ]),
});
`;

const BUDGET_S = 1;
let dir: string;
let server: ChildServer;

async function episode(answer: string): Promise<string> {
  const reset = await http(server.url + "/v1/envs/capitals-loop/episodes", "POST", { index: 0 });
  expect(reset.status).toBe(201);
  const id = reset.json.episode_id as string;
  const step = await http(server.url + `/v1/episodes/${id}/step`, "POST", { turn: 0, message: { role: "assistant", content: `<answer>${answer}</answer>` } });
  expect(step.status).toBe(200);
  return id;
}

beforeAll(async () => {
  ensureBuiltDist();
  dir = await mkdtemp(join(tmpdir(), "edgegym-score-timeout-"));
  await writeFile(join(dir, "capitals-loop.ts"), MODULE);
  await mkdir(join(dir, "node_modules"));
  await symlink(ROOT, join(dir, "node_modules", "edgegym"), "dir");
  await symlink(join(ROOT, "node_modules", "zod"), join(dir, "node_modules", "zod"), "dir");
  server = await startNodeServer({
    db: ":memory:",
    args: ["--env", join(dir, "capitals-loop.ts")],
    env: { EDGEGYM_SCORE_TIMEOUT_SECONDS: String(BUDGET_S), EDGEGYM_REAP_INTERVAL_SECONDS: "0" },
  });
  // The first reset starts the module's scoring thread; one scored episode waits until it has imported the module,
  // which is not the rollout's time (a busy test machine takes seconds), so the timing below is the budget's own.
  const warm = await http(server.url + `/v1/episodes/${await episode("Paris")}/score`, "POST");
  expect(warm.json.score.reward).toBe(1.2);
}, 120_000);

afterAll(async () => {
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("scoring a custom environment whose reward function loops forever", () => {
  it("answers POST /score with score_timeout within the budget, /health answering all the while", async () => {
    const id = await episode("loop");
    const started = Date.now();
    let done = false;
    const scoring = http(server.url + `/v1/episodes/${id}/score`, "POST").finally(() => (done = true));
    const healthMs: number[] = [];
    while (!done) {
      const t = Date.now();
      const health = await http(server.url + "/health", "GET");
      expect(health.status).toBe(200);
      healthMs.push(Date.now() - t);
      await new Promise((r) => setTimeout(r, 50));
    }
    const score = await scoring;
    const elapsed = Date.now() - started;

    expect(score.status).toBe(200);
    expect(elapsed).toBeGreaterThanOrEqual(BUDGET_S * 1000 - 50);
    expect(elapsed).toBeLessThan(BUDGET_S * 1000 + 3_000);
    expect(healthMs.length).toBeGreaterThanOrEqual(3);
    expect(Math.max(...healthMs)).toBeLessThan(500);
    expect(score.json.score.reward).toBe(0);
    expect(score.json.score.components).toEqual([
      { name: "correct", weight: 1, score: 0, error: "score_timeout: scoring ran past its time budget of 1 s (EDGEGYM_SCORE_TIMEOUT_SECONDS)" },
      { name: "format", weight: 0.2, score: 0, error: "score_timeout: scoring ran past its time budget of 1 s (EDGEGYM_SCORE_TIMEOUT_SECONDS)" },
    ]);
    // Stored like any score: asking again answers the same at once.
    const again = await http(server.url + `/v1/episodes/${id}/score`, "POST");
    expect(again.json).toEqual(score.json);
  }, 60_000);

  it("keeps serving after: the next episode scores as usual, and so do completions that waited behind a loop", async () => {
    const id = await episode("Paris");
    const score = await http(server.url + `/v1/episodes/${id}/score`, "POST");
    expect(score.status).toBe(200);
    expect(score.json.score).toMatchObject({ reward: 1.2, components: [{ name: "correct", weight: 1, score: 1 }, { name: "format", weight: 0.2, score: 1 }] });

    const batch = await http(server.url + "/v1/envs/capitals-loop/score", "POST", {
      items: [
        { prompt: "What is the capital of France?", completion: "<answer>loop</answer>", answer: "Paris" },
        { prompt: "What is the capital of France?", completion: "<answer>Paris</answer>", answer: "Paris" },
      ],
    });
    expect(batch.status).toBe(200);
    const [looped, fine] = batch.json.results as { score: { reward: number; components: { error?: string }[] } }[];
    expect(looped?.score.components[0]?.error).toMatch(/^score_timeout: /);
    expect(fine?.score.reward).toBe(1.2);
    expect((await http(server.url + "/health", "GET")).status).toBe(200);
  }, 60_000);
});
