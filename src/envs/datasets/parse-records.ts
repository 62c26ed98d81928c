import { parquetReadObjects, toJson, type Compressors } from "hyparquet";
import Papa from "papaparse";

export type DatasetFormat = "jsonl" | "json" | "csv" | "parquet";

/** One row of a data file, column name → value (JSON values; Parquet int64 read as numbers). */
export type DataRecord = Record<string, unknown>;

export interface ParseOptions {
  /** Extra Parquet decompressors (e.g. from `hyparquet-compressors` for gzip/zstd/brotli); snappy is built in. */
  parquetCompressors?: Compressors;
}

const EXTENSIONS: Record<string, DatasetFormat> = { jsonl: "jsonl", ndjson: "jsonl", json: "json", csv: "csv", tsv: "csv", parquet: "parquet" };

/** The format a file name or URL's path ends with, or null. */
export function formatFromName(source: string): DatasetFormat | null {
  let path = source;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(source)) {
    try {
      path = new URL(source).pathname;
    } catch {
      // not a URL after all: use it as a name
    }
  }
  const ext = /\.([a-z0-9]+)$/i.exec(path.replace(/[?#].*$/, ""))?.[1]?.toLowerCase();
  return ext ? (EXTENSIONS[ext] ?? null) : null;
}

/** Guesses a format from the bytes when the name says nothing: Parquet's magic, then JSON, then CSV. */
export function sniffFormat(bytes: Uint8Array): DatasetFormat {
  if (bytes.length >= 4 && String.fromCharCode(...bytes.subarray(0, 4)) === "PAR1") return "parquet";
  const head = new TextDecoder().decode(bytes.subarray(0, 256)).trimStart();
  if (head.startsWith("[")) return "json";
  if (head.startsWith("{")) return "jsonl";
  return "csv";
}

function asRecord(value: unknown, where: string): DataRecord {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error(`${where}: expected an object (one row), got ${Array.isArray(value) ? "an array" : typeof value}`);
  return value as DataRecord;
}

function parseJsonl(text: string): DataRecord[] {
  const out: DataRecord[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      throw new Error(`JSONL line ${i + 1}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    out.push(asRecord(value, `JSONL line ${i + 1}`));
  });
  return out;
}

function parseJson(text: string): DataRecord[] {
  const value: unknown = JSON.parse(text);
  // A bare array of rows, or an object holding one under "rows" or "data".
  const rows = Array.isArray(value) ? value : (value as { rows?: unknown; data?: unknown } | null)?.rows ?? (value as { data?: unknown } | null)?.data;
  if (!Array.isArray(rows)) throw new Error('JSON dataset: expected an array of rows, or an object with a "rows" or "data" array');
  return rows.map((r, i) => asRecord(r, `JSON row ${i}`));
}

function parseCsv(text: string): DataRecord[] {
  // Header row names the columns; values stay strings (an answer "007" must not become 7).
  const result = Papa.parse<DataRecord>(text.replace(/^\uFEFF/, ""), { header: true, skipEmptyLines: "greedy", dynamicTyping: false });
  const fatal = result.errors.find((e) => e.type !== "Delimiter");
  if (fatal) throw new Error(`CSV row ${(fatal.row ?? 0) + 1}: ${fatal.message}`);
  return result.data;
}

async function parseParquet(bytes: Uint8Array, options: ParseOptions): Promise<DataRecord[]> {
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  const rows = await parquetReadObjects({ file, ...(options.parquetCompressors ? { compressors: options.parquetCompressors } : {}) });
  // toJson: BigInt → number, Date → ISO text, bytes → arrays, so rows are plain JSON.
  return rows.map((r) => toJson(r) as DataRecord);
}

/**
 * Parses a data file's bytes into rows. Pure: no I/O, so it runs on Node and Workers.
 *
 * @example await parseRecords(new TextEncoder().encode('{"q":"1+1","a":"2"}\n'), "jsonl")
 */
export async function parseRecords(bytes: Uint8Array, format: DatasetFormat, options: ParseOptions = {}): Promise<DataRecord[]> {
  if (format === "parquet") return parseParquet(bytes, options);
  const text = new TextDecoder().decode(bytes);
  switch (format) {
    case "jsonl":
      return parseJsonl(text);
    case "json":
      return parseJson(text);
    case "csv":
      return parseCsv(text);
  }
}
