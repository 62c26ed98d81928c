import { ChatMessage, type Split } from "../../protocol/index.js";
import { rowsDataset } from "../dataset.js";
import { createRng } from "../rng.js";
import type { Dataset, TaskRow } from "../types.js";
import type { DataRecord } from "./parse-records.js";

/** Which column (or function of the row) becomes each part of a task. */
export interface ColumnMapping {
  /**
   * Text, or a list of chat messages. Default: the first of `prompt`, `question`,
   * `problem`, `input` the rows have.
   */
  prompt?: string | ((record: DataRecord) => TaskRow["prompt"]);
  /** Default: `answer` when the rows have it. Non-text values are written as JSON text (numbers as `42`). null: no answer. */
  answer?: string | null | ((record: DataRecord) => string | null);
  /** Columns kept in `info`. Default: every column not used as prompt or answer. */
  info?: readonly string[] | ((record: DataRecord) => Record<string, unknown>);
}

/** Rows of one file assigned to splits by a column's value, e.g. `{ column: "split", train: "train", eval: ["test", "validation"] }`. */
export interface SplitColumn {
  column: string;
  train: string | readonly string[];
  eval?: string | readonly string[];
}

export interface RecordsDatasetOptions {
  columns?: ColumnMapping;
  /** Assign rows to splits by a column. Without it (and one source), `evalFraction` decides. */
  split?: SplitColumn;
  /** Share of rows drawn (seeded) into `eval` when nothing else splits them. Default 0. */
  evalFraction?: number;
  /** Seeds the eval draw and the shuffle, so every process sees the same splits in the same order. Default 0. */
  seed?: number;
  /** Shuffle each split's order (seeded). Default false: file order. */
  shuffle?: boolean;
  /** Keep at most this many rows per split (after shuffling). */
  limit?: { train?: number; eval?: number };
}

const PROMPT_COLUMNS = ["prompt", "question", "problem", "input"];

function answerText(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  return typeof value === "string" ? value : JSON.stringify(value);
}

function promptOf(value: unknown, where: string): TaskRow["prompt"] {
  if (typeof value === "string") return value;
  const messages = ChatMessage.array().min(1).safeParse(value);
  if (messages.success) return messages.data;
  throw new Error(`${where}: the prompt must be text or a list of chat messages`);
}

/** Turns data rows into tasks by the column mapping (columns are read from the first row). */
export function recordsToTasks(records: readonly DataRecord[], columns: ColumnMapping = {}): TaskRow[] {
  const first = records[0] ?? {};
  const promptCol = typeof columns.prompt === "string" ? columns.prompt : columns.prompt ? null : PROMPT_COLUMNS.find((c) => c in first);
  if (promptCol === undefined && records.length) throw new Error(`no prompt column: the rows have ${Object.keys(first).join(", ")}; name one in columns.prompt`);
  const answerCol = typeof columns.answer === "string" ? columns.answer : columns.answer === undefined && "answer" in first ? "answer" : null;
  const used = new Set([promptCol, answerCol].filter((c): c is string => typeof c === "string"));
  return records.map((record, i) => {
    const where = `row ${i}`;
    const prompt = typeof columns.prompt === "function" ? columns.prompt(record) : promptOf(record[promptCol as string], where);
    const answer = typeof columns.answer === "function" ? columns.answer(record) : answerCol ? answerText(record[answerCol]) : null;
    let info: Record<string, unknown>;
    if (typeof columns.info === "function") info = columns.info(record);
    else if (columns.info) info = Object.fromEntries(columns.info.map((c) => [c, record[c] ?? null]));
    else info = Object.fromEntries(Object.entries(record).filter(([k]) => !used.has(k)));
    return { prompt, answer, info };
  });
}

const asList = (v: string | readonly string[] | undefined): readonly string[] => (v === undefined ? [] : typeof v === "string" ? [v] : v);

/** Shuffles (when asked) and caps each split. */
export function finishSplits(bySplit: Record<Split, TaskRow[]>, opts: RecordsDatasetOptions): Record<Split, TaskRow[]> {
  const out = { ...bySplit };
  (["train", "eval"] as const).forEach((split, k) => {
    if (opts.shuffle) out[split] = createRng(opts.seed ?? 0, 0x5f1e, k).shuffle(out[split]);
    const cap = opts.limit?.[split];
    if (cap !== undefined) out[split] = out[split].slice(0, cap);
  });
  return out;
}

/** Assigns already-mapped tasks of one source to splits (split column values, or a seeded eval draw). */
export function splitTasks(records: readonly DataRecord[], tasks: readonly TaskRow[], opts: RecordsDatasetOptions): Record<Split, TaskRow[]> {
  if (opts.split) {
    const { column } = opts.split;
    const train = new Set(asList(opts.split.train));
    const evalValues = new Set(asList(opts.split.eval));
    const bySplit: Record<Split, TaskRow[]> = { train: [], eval: [] };
    records.forEach((r, i) => {
      const value = String(r[column] ?? "");
      if (train.has(value)) bySplit.train.push(tasks[i] as TaskRow);
      else if (evalValues.has(value)) bySplit.eval.push(tasks[i] as TaskRow);
    });
    return finishSplits(bySplit, opts);
  }
  const fraction = opts.evalFraction ?? 0;
  if (!(fraction >= 0 && fraction < 1)) throw new Error("evalFraction must be in [0, 1)");
  // Draw eval rows by a seeded permutation; keep file order inside each split.
  const order = createRng(opts.seed ?? 0).shuffle(tasks.map((_, i) => i));
  const evalSet = new Set(order.slice(order.length - Math.round(tasks.length * fraction)));
  return finishSplits({ train: tasks.filter((_, i) => !evalSet.has(i)), eval: tasks.filter((_, i) => evalSet.has(i)) }, opts);
}

/**
 * A dataset from rows already in memory (a JSON import, rows parsed elsewhere).
 *
 * @example recordsDataset(rows, { columns: { prompt: "question", answer: "answer" }, evalFraction: 0.1, seed: 1 })
 */
export function recordsDataset(records: readonly DataRecord[], opts: RecordsDatasetOptions = {}): Dataset & { tasks: Record<Split, TaskRow[]> } {
  const tasks = splitTasks(records, recordsToTasks(records, opts.columns), opts);
  return { ...rowsDataset({ train: tasks.train, eval: tasks.eval }), tasks };
}
