import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parquetWriteBuffer } from "hyparquet-writer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fetchReader, loadDataset } from "./load-dataset.js";
import { formatFromName, parseRecords, sniffFormat } from "./parse-records.js";
import { readSource } from "./read-source.node.js";
import { recordsDataset, recordsToTasks } from "./records-dataset.js";

const QA = Array.from({ length: 20 }, (_, i) => ({ question: `What is ${i} + ${i}?`, answer: String(2 * i), level: i % 3, split: i < 15 ? "train" : "test" }));

function csvOf(rows: typeof QA): string {
  const header = "question,answer,level,split";
  return [header, ...rows.map((r) => `"${r.question}",${r.answer},${r.level},${r.split}`)].join("\r\n") + "\r\n";
}

let dir: string;
let server: Server;
let baseUrl: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "edgegym-datasets-"));
  await writeFile(join(dir, "qa.jsonl"), QA.map((r) => JSON.stringify(r)).join("\n") + "\n\n");
  await writeFile(join(dir, "qa.json"), JSON.stringify(QA));
  await writeFile(join(dir, "qa.csv"), csvOf(QA));
  const parquet = parquetWriteBuffer({
    columnData: [
      { name: "question", data: QA.map((r) => r.question), type: "STRING" },
      { name: "answer", data: QA.map((r) => r.answer), type: "STRING" },
      { name: "level", data: BigInt64Array.from(QA.map((r) => BigInt(r.level))), type: "INT64" },
      { name: "split", data: QA.map((r) => r.split), type: "STRING" },
    ],
  });
  await writeFile(join(dir, "qa.parquet"), new Uint8Array(parquet));
  await writeFile(join(dir, "no-extension"), new Uint8Array(parquet));
  await writeFile(join(dir, "bad.jsonl"), '{"question":"a"}\nnot json\n');
  // Serves the temp dir over HTTP on 127.0.0.1, for the URL reader.
  server = createServer((req, res) => {
    void (async () => {
      try {
        const { readFile } = await import("node:fs/promises");
        const body = await readFile(join(dir, (req.url ?? "/").slice(1).replace(/\?.*$/, "")));
        res.writeHead(200).end(body);
      } catch {
        res.writeHead(404).end("not found");
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rm(dir, { recursive: true, force: true });
});

describe("loadDataset", () => {
  it.each(["jsonl", "json", "csv", "parquet"])("reads %s files into the same tasks", async (ext) => {
    const dataset = await loadDataset({ source: join(dir, `qa.${ext}`), read: readSource, columns: { prompt: "question", answer: "answer", info: ["level"] } });
    expect(dataset.size("train")).toBe(20);
    expect(dataset.size("eval")).toBe(0);
    const row = await dataset.row("train", 7);
    // CSV keeps text (level "1"); JSON/Parquet keep numbers (Parquet int64 as a number, not a BigInt).
    expect(row).toEqual({ prompt: "What is 7 + 7?", answer: "14", info: { level: ext === "csv" ? "1" : 1 } });
  });

  it("reads URLs through fetch, with the format from the URL's path", async () => {
    const dataset = await loadDataset({ source: `${baseUrl}/qa.parquet?download=1`, columns: { prompt: "question" } });
    expect(dataset.size("train")).toBe(20);
    expect((await dataset.row("train", 0)).info).toEqual({ level: 0, split: "train" });
    await expect(loadDataset({ source: `${baseUrl}/missing.jsonl` })).rejects.toThrow(/HTTP 404/);
  });

  it("sniffs the format of a file without an extension", async () => {
    const dataset = await loadDataset({ source: join(dir, "no-extension"), read: readSource, columns: { prompt: "question" } });
    expect(dataset.size("train")).toBe(20);
  });

  it("maps rows to splits by a column", async () => {
    const dataset = await loadDataset({ source: join(dir, "qa.jsonl"), read: readSource, split: { column: "split", train: "train", eval: ["test", "validation"] } });
    expect([dataset.size("train"), dataset.size("eval")]).toEqual([15, 5]);
    expect((await dataset.row("eval", 0)).prompt).toBe("What is 15 + 15?");
  });

  it("takes one source per split", async () => {
    const dataset = await loadDataset({ source: { train: join(dir, "qa.csv"), eval: join(dir, "qa.parquet") }, read: readSource, limit: { eval: 3 } });
    expect([dataset.size("train"), dataset.size("eval")]).toEqual([20, 3]);
  });

  it("draws a seeded eval share, keeps file order unless asked to shuffle, and is the same every time", async () => {
    const load = (seed: number, shuffle: boolean) => loadDataset({ source: join(dir, "qa.json"), read: readSource, evalFraction: 0.25, seed, shuffle });
    const a = await load(3, false);
    const b = await load(3, false);
    expect([a.size("train"), a.size("eval")]).toEqual([15, 5]);
    expect(a.tasks).toEqual(b.tasks);
    const trainIds = a.tasks.train.map((t) => Number(t.answer) / 2);
    expect(trainIds).toEqual([...trainIds].sort((x, y) => x - y));
    const other = await load(4, false);
    expect(other.tasks.eval).not.toEqual(a.tasks.eval);
    const shuffled = await load(3, true);
    expect(new Set(shuffled.tasks.train.map((t) => t.answer))).toEqual(new Set(a.tasks.train.map((t) => t.answer)));
    expect(shuffled.tasks.train).not.toEqual(a.tasks.train);
    expect(shuffled.tasks).toEqual((await load(3, true)).tasks);
  });

  it("says which line of which file is broken", async () => {
    await expect(loadDataset({ source: join(dir, "bad.jsonl"), read: readSource })).rejects.toThrow(/bad\.jsonl \(jsonl\): JSONL line 2:/);
  });

  it("asks for a reader when given a path without one", async () => {
    await expect(loadDataset({ source: join(dir, "qa.jsonl") })).rejects.toThrow(/is not a URL: to read files, pass loadDataset a reader/);
    await expect(fetchReader("./x.csv")).rejects.toThrow();
  });
});

describe("column mapping", () => {
  it("defaults: prompt from prompt/question/problem/input, answer from answer, the rest in info", () => {
    expect(recordsToTasks([{ problem: "p", answer: 3, id: 1 }])).toEqual([{ prompt: "p", answer: "3", info: { id: 1 } }]);
    expect(recordsToTasks([{ prompt: "x" }])).toEqual([{ prompt: "x", answer: null, info: {} }]);
    expect(() => recordsToTasks([{ text: "x" }])).toThrow(/no prompt column: the rows have text/);
  });

  it("accepts chat-message prompts and mapping functions", () => {
    const rows = [{ messages: [{ role: "user", content: "hi" }], target: { value: 2 } }];
    expect(recordsToTasks(rows, { prompt: "messages", answer: (r) => String((r.target as { value: number }).value), info: (r) => ({ has_target: "target" in r }) })).toEqual([
      { prompt: [{ role: "user", content: "hi" }], answer: "2", info: { has_target: true } },
    ]);
    expect(() => recordsToTasks([{ prompt: [{ role: "robot" }] }])).toThrow(/row 0: the prompt must be text or a list of chat messages/);
  });

  it("builds a dataset from rows in memory", async () => {
    const dataset = recordsDataset(QA, { columns: { prompt: "question" }, split: { column: "split", train: "train", eval: "test" } });
    expect(dataset.size("eval")).toBe(5);
    await expect(async () => dataset.row("eval", 5)).rejects.toThrow(RangeError);
  });
});

describe("format detection", () => {
  it("reads the extension of names and URLs, and sniffs bytes", () => {
    expect(formatFromName("a/b.NDJSON")).toBe("jsonl");
    expect(formatFromName("https://h/x/data.parquet?raw=1#frag")).toBe("parquet");
    expect(formatFromName("file.tsv")).toBe("csv");
    expect(formatFromName("README")).toBeNull();
    expect(sniffFormat(new TextEncoder().encode("  [{}]"))).toBe("json");
    expect(sniffFormat(new TextEncoder().encode('{"a":1}\n'))).toBe("jsonl");
    expect(sniffFormat(new TextEncoder().encode("a,b\n1,2"))).toBe("csv");
  });

  it("parses a JSON object holding rows, and tab-separated CSV", async () => {
    expect(await parseRecords(new TextEncoder().encode('{"rows":[{"a":1}]}'), "json")).toEqual([{ a: 1 }]);
    expect(await parseRecords(new TextEncoder().encode("a\tb\n1\t\"x\ty\"\n"), "csv")).toEqual([{ a: "1", b: "x\ty" }]);
    await expect(parseRecords(new TextEncoder().encode('{"x":1}'), "json")).rejects.toThrow(/expected an array of rows/);
  });
});
