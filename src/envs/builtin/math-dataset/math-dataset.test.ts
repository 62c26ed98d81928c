import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parquetWriteBuffer } from "hyparquet-writer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readSource } from "../../datasets/read-source.node.js";
import { envContentHash } from "../../content-hash.js";
import { scoreEpisode, startEpisode, stepEpisode } from "../../engine.js";
import { createMathDatasetEnv, MathDatasetConfig } from "./index.js";

// GSM8K's fields (the reference is a worked solution ending in `#### n`) and MATH's
// (`problem` / `solution` with a \boxed{} answer), a few rows each.
const GSM8K = [
  { question: "Tom has 3 apples and buys 4 more. How many apples?", answer: "He has 3 + 4 = <<3+4=7>>7 apples.\n#### 7" },
  { question: "A pen costs $2. What do 6 pens cost?", answer: "6 * 2 = <<6*2=12>>12\n#### 12" },
];
const MATH = [
  { problem: "What is $\\frac{1}{2} + \\frac{1}{4}$?", solution: "Adding, $\\frac{2}{4} + \\frac{1}{4} = \\boxed{\\frac{3}{4}}$.", level: "Level 1" },
  { problem: "Solve $x^2 = 4$ for $x > 0$.", solution: "So $x = \\boxed{2}$.", level: "Level 1" },
];

let dir: string;
let server: Server;
let baseUrl: string;
let requests = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "edgegym-math-dataset-"));
  await writeFile(join(dir, "gsm8k.jsonl"), GSM8K.map((r) => JSON.stringify(r)).join("\n"));
  const parquet = parquetWriteBuffer({
    columnData: [
      { name: "problem", data: MATH.map((r) => r.problem), type: "STRING" },
      { name: "solution", data: MATH.map((r) => r.solution), type: "STRING" },
      { name: "level", data: MATH.map((r) => r.level), type: "STRING" },
    ],
  });
  await writeFile(join(dir, "math.parquet"), new Uint8Array(parquet));
  server = createServer((req, res) => {
    requests++;
    void readFile(join(dir, (req.url ?? "/").slice(1))).then(
      (body) => res.writeHead(200).end(body),
      () => res.writeHead(404).end("not found"),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rm(dir, { recursive: true, force: true });
});

async function play(env: ReturnType<typeof createMathDatasetEnv>, index: number, reply: string) {
  const start = await startEpisode(env, { index });
  const { snapshot } = await stepEpisode(env, start, { role: "assistant", content: reply });
  return { start, score: await scoreEpisode(env, snapshot) };
}

describe("math-dataset", () => {
  it("serves GSM8K-style JSONL from a path and scores a boxed answer against the `####` reference", async () => {
    const env = createMathDatasetEnv({ source: join(dir, "gsm8k.jsonl") }, { read: readSource });
    await env.dataset.ready();
    expect([env.dataset.size("train"), env.id]).toEqual([2, "math-dataset"]);
    const right = await play(env, 0, "3 + 4 = 7, so the answer is $\\boxed{7}$.");
    expect(right.start.messages.at(-1)).toEqual({ role: "user", content: GSM8K[0]?.question });
    expect(right.score.components.map((c) => [c.name, c.score])).toEqual([["correct", 1], ["format", 1]]);
    const wrong = await play(env, 1, "$\\boxed{8}$");
    expect(wrong.score.components[0]?.score).toBe(0);
  });

  it("serves MATH-style Parquet from a URL, loaded on the first reset and kept", async () => {
    const env = createMathDatasetEnv({ source: `${baseUrl}/math.parquet`, id: "math-500" });
    expect(env.dataset.size("train")).toBeNull(); // not loaded yet: nothing fetched while the module loads
    const before = requests;
    const right = await play(env, 0, "We get \\boxed{0.75}.");
    expect(right.score.components[0]?.score).toBe(1);
    expect((await play(env, 1, "x = \\boxed{-2}")).score.components[0]?.score).toBe(0);
    expect(requests - before).toBe(1);
    expect(env.dataset.size("train")).toBe(2);
  });

  it("hashes the rows it loads: a hash asked for before the first reset waits for them", async () => {
    const lazy = createMathDatasetEnv({ source: `${baseUrl}/math.parquet` });
    const loaded = createMathDatasetEnv({ source: `${baseUrl}/math.parquet` });
    await loaded.dataset.ready();
    const before = await envContentHash(lazy); // nothing loaded yet: the hash loads it
    expect(lazy.dataset.size("train")).toBe(2);
    expect(before).toBe(await envContentHash(loaded));
    // Different rows, different hash: the data is in it, not a procedural sample of it.
    const other = createMathDatasetEnv({ source: join(dir, "gsm8k.jsonl") }, { read: readSource });
    expect(await envContentHash(other)).not.toBe(before);
  });

  it("takes explicit columns, splits and precision from the config, and refuses unknown settings", async () => {
    const env = createMathDatasetEnv({ source: join(dir, "gsm8k.jsonl"), prompt_column: "question", answer_column: "answer", eval_fraction: 0.5, seed: 3 }, { read: readSource });
    await env.dataset.ready();
    expect([env.dataset.size("train"), env.dataset.size("eval")]).toEqual([1, 1]);
    expect(MathDatasetConfig.safeParse({ source: "x.jsonl", columns: {} }).success).toBe(false);
    expect(MathDatasetConfig.safeParse({ source: "" }).success).toBe(false);
  });

  it("reports a missing file on the reset and tries again on the next", async () => {
    const env = createMathDatasetEnv({ source: join(dir, "missing.jsonl") }, { read: readSource });
    await expect(startEpisode(env, { index: 0 })).rejects.toThrow(/missing\.jsonl/);
    await writeFile(join(dir, "missing.jsonl"), JSON.stringify(GSM8K[0]));
    expect((await play(env, 0, "\\boxed{7}")).score.components[0]?.score).toBe(1);
  });
});
