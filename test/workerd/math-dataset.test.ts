import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { builtinEnvs, createMathDatasetEnv, envContentHash } from "../../src/envs/index.js";
import { createWorker, type WorkerBindings } from "../../src/server/worker/worker.js";

// The math-dataset environment on a Worker, named by the EDGEGYM_MATH_DATASET var. The
// rows travel as a data: URL (workerd's fetch reads it like any URL; the test has no
// network), GSM8K's fields with the `#### n` reference.
const ROWS = [
  { question: "Tom has 3 apples and buys 4 more. How many apples?", answer: "He has 3 + 4 = <<3+4=7>>7 apples.\n#### 7" },
  { question: "A pen costs $2. What do 6 pens cost?", answer: "6 * 2 = <<6*2=12>>12\n#### 12" },
  { question: "Half of 9?", answer: "9 / 2 = 4.5\n#### 4.5" },
];
const jsonl = ROWS.map((r) => JSON.stringify(r)).join("\n");
const SOURCE = `data:application/x-ndjson;base64,${btoa(jsonl)}`;
const VAR = JSON.stringify({ source: SOURCE, format: "jsonl" });

const call = async (worker: ReturnType<typeof createWorker>, bindings: WorkerBindings, method: string, path: string, body?: unknown) => {
  const init: RequestInit = { method, headers: body === undefined ? {} : { "content-type": "application/json" } };
  if (body !== undefined) init.body = JSON.stringify(body);
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(`http://edgegym.test${path}`, init), bindings, ctx);
  await waitOnExecutionContext(ctx);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- assertions walk the body freely
  return { status: res.status, json: (await res.json()) as any };
};

describe("math-dataset on the Worker, from EDGEGYM_MATH_DATASET", () => {
  it("is not served without the var", async () => {
    const worker = createWorker(builtinEnvs);
    const reset = await call(worker, env, "POST", "/v1/envs/math-dataset/episodes", {});
    expect([reset.status, reset.json.error.code]).toEqual([404, "env_not_found"]);
  });

  it("loads the rows the var names, hashes them (waiting for the load) and scores with verifyMath", async () => {
    const bindings: WorkerBindings = { ...env, EDGEGYM_MATH_DATASET: VAR };
    const worker = createWorker(builtinEnvs);
    // Asked before any reset: the hash waits for the rows, so it is the hash of the loaded data.
    const info = await call(worker, bindings, "GET", "/v1/envs/math-dataset");
    expect(info.status).toBe(200);
    expect(info.json.splits).toEqual({ train: 3, eval: 0 });
    const loaded = createMathDatasetEnv({ source: SOURCE, format: "jsonl" });
    await loaded.dataset.ready();
    expect(info.json.hash).toBe(await envContentHash(loaded));

    const reset = await call(worker, bindings, "POST", "/v1/envs/math-dataset/episodes", { index: 2 });
    expect(reset.status).toBe(201);
    expect(reset.json.env_hash).toBe(info.json.hash);
    expect(reset.json.messages.at(-1)).toEqual({ role: "user", content: ROWS[2]?.question });
    const id = reset.json.episode_id;
    await call(worker, bindings, "POST", `/v1/episodes/${id}/step`, { turn: 0, message: { role: "assistant", content: "Nine halves: $\\boxed{\\frac{9}{2}}$." } });
    const score = await call(worker, bindings, "POST", `/v1/episodes/${id}/score`);
    expect(score.json.score.components.map((c: { name: string; score: number }) => [c.name, c.score])).toEqual([["correct", 1], ["format", 1]]);
  });

  it("answers a misconfigured var with a 500 that names it: bad JSON, unknown settings, a file path", async () => {
    for (const [value, message] of [
      ["{not json", /EDGEGYM_MATH_DATASET: not valid JSON/],
      [JSON.stringify({ source: SOURCE, colums: {} }), /EDGEGYM_MATH_DATASET: .*colums/],
      ["./gsm8k.jsonl", /EDGEGYM_MATH_DATASET: a Worker reads no files/],
    ] as const) {
      const res = await call(createWorker(builtinEnvs), { ...env, EDGEGYM_MATH_DATASET: value }, "GET", "/v1/envs");
      expect(res.status).toBe(500);
      expect(res.json.error.message).toMatch(message);
    }
  });
});
