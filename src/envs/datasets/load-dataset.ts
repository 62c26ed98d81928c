import type { Split } from "../../protocol/index.js";
import { rowsDataset } from "../dataset.js";
import type { Dataset, TaskRow } from "../types.js";
import { formatFromName, parseRecords, sniffFormat, type DatasetFormat, type ParseOptions } from "./parse-records.js";
import { finishSplits, recordsToTasks, splitTasks, type RecordsDatasetOptions } from "./records-dataset.js";

/** Reads a source (path or URL) to bytes. Runtime-aware code supplies it; see `fetchReader`. */
export type DatasetReader = (source: string) => Promise<Uint8Array>;

/**
 * Reads http(s) and data: URLs with `fetch`, which every runtime has. A file path needs a
 * file reader: on Node, `readSource` from `edgegym/node` (src/envs/datasets/read-source.node.ts).
 */
export const fetchReader: DatasetReader = async (source) => {
  if (!/^(https?|data):/i.test(source)) {
    throw new Error(`"${source}" is not a URL: to read files, pass loadDataset a reader (on Node: read: readSource from edgegym's Node entry)`);
  }
  const res = await fetch(source);
  if (!res.ok) throw new Error(`GET ${source}: HTTP ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
};

export interface LoadDatasetOptions extends RecordsDatasetOptions, ParseOptions {
  /** One file or URL, or one per split. */
  source: string | { train: string; eval?: string };
  /** Default: from the name's extension (.jsonl/.ndjson, .json, .csv/.tsv, .parquet), else sniffed from the bytes. */
  format?: DatasetFormat;
  /** Default: `fetchReader` (URLs only). */
  read?: DatasetReader;
}

async function readTable(source: string, opts: LoadDatasetOptions) {
  const bytes = await (opts.read ?? fetchReader)(source);
  const format = opts.format ?? formatFromName(source) ?? sniffFormat(bytes);
  try {
    return await parseRecords(bytes, format, opts);
  } catch (err) {
    throw new Error(`${source} (${format}): ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

/**
 * Loads a dataset from JSONL, JSON, CSV or Parquet, maps columns to prompt / answer / info
 * and splits it into train and eval: one source per split, a split column, or a seeded
 * `evalFraction` draw. Load it once when the environment module loads, not per request.
 *
 * @example
 * const dataset = await loadDataset({
 *   source: "https://example.org/gsm8k/train.parquet",
 *   columns: { prompt: "question", answer: (r) => String(r.answer).split("####").pop()!.trim() },
 *   evalFraction: 0.05, seed: 7, shuffle: true,
 * });
 */
export async function loadDataset(opts: LoadDatasetOptions): Promise<Dataset & { tasks: Record<Split, TaskRow[]> }> {
  let tasks: Record<Split, TaskRow[]>;
  if (typeof opts.source === "string") {
    const records = await readTable(opts.source, opts);
    tasks = splitTasks(records, recordsToTasks(records, opts.columns), opts);
  } else {
    const [train, evalRecords] = await Promise.all([readTable(opts.source.train, opts), opts.source.eval ? readTable(opts.source.eval, opts) : Promise.resolve([])]);
    tasks = finishSplits({ train: recordsToTasks(train, opts.columns), eval: recordsToTasks(evalRecords, opts.columns) }, opts);
  }
  return { ...rowsDataset({ train: tasks.train, eval: tasks.eval }), tasks };
}
