import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, open, readdir, readFile, rename, stat, writeFile, type FileHandle } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { EvalRollout } from "../../protocol/index.js";
import type { RunMetadata } from "../metadata.js";
import { rolloutSpans } from "../rollout.js";
import { EDGEGYM_TASK_TYPE, fromVf03Row, fromVf04Episode, isVf04Episode, toVf03Row, toVf04Episode, type VfFormat, type Vf04Context } from "../vf-formats.js";
import { formatAssignment } from "../seats.js";

export const RESULTS_FILE = "results.jsonl";
/** verifiers 0.4's rollout file (`TRACES_FILE` in `verifiers/v1/utils/trace_store.py`). */
export const TRACES_FILE = "traces.jsonl";
export const METADATA_FILE = "metadata.json";

/** The file a run of this format appends its rollouts to. */
export function rolloutsFile(format: VfFormat): string {
  return format === "vf04" ? TRACES_FILE : RESULTS_FILE;
}

/** Which generation a run directory is: `traces.jsonl` → vf04, `results.jsonl` → vf03, neither → null. */
export function detectRunFormat(dir: string): VfFormat | null {
  if (existsSync(join(dir, TRACES_FILE))) return "vf04";
  if (existsSync(join(dir, RESULTS_FILE))) return "vf03";
  return null;
}

/**
 * The rollouts of a run directory (or of a results.jsonl / traces.jsonl file) as edgegym
 * rollouts, whichever tool and verifiers generation wrote them. Rows without a
 * `rollout_index` (vf-eval's) get the lowest index their row has not used, in file order.
 * `raw` keeps each row as it was in the file, for rewriting it unchanged.
 */
export async function readRunRollouts(pathOrDir: string, envId = ""): Promise<{ rows: EvalRollout[]; raw: unknown[]; lines: string[]; format: VfFormat; path: string; droppedTrailing: boolean }> {
  let path = pathOrDir;
  let format: VfFormat;
  if (existsSync(pathOrDir) && (await stat(pathOrDir)).isDirectory()) {
    const found = detectRunFormat(pathOrDir);
    if (!found) throw new Error(`${pathOrDir} holds neither ${RESULTS_FILE} nor ${TRACES_FILE}`);
    format = found;
    path = join(pathOrDir, rolloutsFile(found));
  } else format = "vf03";
  const text = await readFile(path, "utf8");
  const { rows: raw, droppedTrailing } = parseJsonl<unknown>(text, path);
  // Each row's own text (a half-written last line is the one left out), to rewrite rows byte for byte.
  const lines = text.split("\n").filter((l) => l.trim()).slice(0, raw.length);
  // A file given by name is vf04 when its lines are episodes, whatever it is called.
  if (path !== join(dirname(path), RESULTS_FILE) && raw.some(isVf04Episode)) format = "vf04";
  const index = (r: unknown): number | null => (typeof r === "object" && r !== null && typeof (r as { rollout_index?: unknown }).rollout_index === "number" ? (r as { rollout_index: number }).rollout_index : null);
  const pre = raw.map((r, i) => {
    try {
      return format === "vf04" ? fromVf04Episode(r, -1, envId) : fromVf03Row(r, index(r) ?? -1, envId);
    } catch (err) {
      throw new Error(`${path}: line ${i + 1}: ${(err as Error).message}`, { cause: err });
    }
  });
  const used = new Map<number, Set<number>>();
  for (const row of pre) if (row.rollout_index >= 0) (used.get(row.example_id) ?? used.set(row.example_id, new Set()).get(row.example_id))?.add(row.rollout_index);
  for (const row of pre) {
    if (row.rollout_index >= 0) continue;
    const taken = used.get(row.example_id) ?? used.set(row.example_id, new Set()).get(row.example_id) as Set<number>;
    let next = 0;
    while (taken.has(next)) next++;
    taken.add(next);
    row.rollout_index = next;
  }
  return { rows: pre, raw, lines, format, path, droppedTrailing };
}

/** `<base>/evals/<env>--<model with / as -->`: vf-eval's layout, so its tooling finds runs. */
export function runsDirFor(outputBase: string, envId: string, model: string): string {
  return join(outputBase, "evals", `${envId}--${model.replaceAll("/", "--")}`);
}

/** A fresh run directory named by 8 hex characters, as vf-eval names them. */
export function newRunDir(outputBase: string, envId: string, model: string): string {
  return join(runsDirFor(outputBase, envId, model), randomUUID().slice(0, 8));
}

export interface ReadResults<T> {
  rows: T[];
  /** A half-written last line (the process died mid-write) was found and left out. */
  droppedTrailing: boolean;
}

/**
 * Reads a JSONL file. A malformed last line is what a crash mid-append leaves, so it is
 * left out; a malformed line before the end means the file is damaged and is an error.
 */
export function parseJsonl<T>(text: string, where: string): ReadResults<T> {
  const lines = text.split("\n");
  const rows: T[] = [];
  let droppedTrailing = false;
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (!line) continue;
    try {
      rows.push(JSON.parse(line) as T);
    } catch {
      if (lines.slice(i + 1).some((l) => l.trim())) throw new Error(`${where}: line ${i + 1} is not valid JSON`);
      droppedTrailing = true;
    }
  }
  return { rows, droppedTrailing };
}

export async function readResults<T = EvalRollout>(path: string): Promise<ReadResults<T>> {
  return parseJsonl<T>(await readFile(path, "utf8"), path);
}

/** Writes a file through a temporary name, so a reader never sees it half-written. */
export async function writeFileAtomic(path: string, text: string): Promise<void> {
  const tmp = `${path}.${process.pid}.${randomUUID().slice(0, 6)}.tmp`;
  await writeFile(tmp, text);
  await rename(tmp, path);
}

export async function writeMetadata(dir: string, metadata: RunMetadata): Promise<void> {
  await writeFileAtomic(join(dir, METADATA_FILE), `${JSON.stringify(metadata, null, 2)}\n`);
}

export async function readMetadata(dir: string): Promise<RunMetadata> {
  return JSON.parse(await readFile(join(dir, METADATA_FILE), "utf8")) as RunMetadata;
}

/**
 * A run's metadata for `--resume`: edgegym's, or the subset vf-eval 0.3 wrote (no split,
 * seed or time). verifiers 0.4 writes no metadata.json (its settings live in
 * `configs/resolved/eval.json`): then `{}`, and only the rollouts are checked.
 */
export async function readResumeMetadata(dir: string): Promise<Partial<RunMetadata>> {
  const path = join(dir, METADATA_FILE);
  if (!existsSync(path)) {
    if (detectRunFormat(dir) === "vf04") return {};
    throw new Error(`${dir} has no ${METADATA_FILE}`);
  }
  const parsed: unknown = JSON.parse(await readFile(path, "utf8"));
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error(`${path} is not a JSON object`);
  return parsed as Partial<RunMetadata>;
}

/**
 * Appends rollouts to results.jsonl as they finish, one line each, in order of
 * completion. Writes go one after another through a single handle, so lines never
 * interleave; what was written survives a crash or Ctrl-C.
 */
export class ResultsWriter {
  private chain: Promise<void> = Promise.resolve();

  private constructor(
    private readonly handle: FileHandle,
    private readonly format: VfFormat,
    private readonly vf04: Vf04Context | undefined,
  ) {}

  /** `vf03`: results.jsonl rows (verifiers 0.3's nested timing added); `vf04`: traces.jsonl episodes (needs `vf04`). */
  static async open(dir: string, format: VfFormat = "vf03", vf04?: Vf04Context): Promise<ResultsWriter> {
    if (format === "vf04" && !vf04) throw new Error("a vf04 run needs its run context");
    await mkdir(dir, { recursive: true });
    return new ResultsWriter(await open(join(dir, rolloutsFile(format)), "a"), format, vf04);
  }

  write(row: EvalRollout): Promise<void> {
    const spans = rolloutSpans(row);
    const shaped = this.format === "vf04" ? toVf04Episode(row, spans, this.vf04 as Vf04Context) : toVf03Row(row, spans);
    const line = `${JSON.stringify(shaped)}\n`;
    this.chain = this.chain.then(() => this.handle.appendFile(line));
    return this.chain;
  }

  async close(): Promise<void> {
    await this.chain;
    await this.handle.sync();
    await this.handle.close();
  }
}

export interface ResumeState {
  /** Rollouts kept: finished without error. */
  rows: EvalRollout[];
  /** Failed rollouts taken out of results.jsonl to be run again. */
  redo: number;
  droppedTrailing: boolean;
  /**
   * vf04: the task each row's episodes recorded (`task` of the first, one with verifiers'
   * `hash` first; edgegym's own task records left out), failed episodes included, read
   * before they are taken out: the episodes added on resume record the same
   * (`Vf04Context.tasks`). Empty for vf03.
   */
  vf04Tasks: Map<number, Record<string, unknown>>;
}

/**
 * Gets a run directory ready to continue: keeps rollouts that finished, takes out failed
 * ones (they run again) and a half-written last line, rewriting results.jsonl only when
 * something was taken out.
 */
export async function prepareResume(dir: string, envId = ""): Promise<ResumeState> {
  if (!detectRunFormat(dir)) return { rows: [], redo: 0, droppedTrailing: false, vf04Tasks: new Map() };
  const { rows, raw, lines, path, format, droppedTrailing } = await readRunRollouts(dir, envId);
  const vf04Tasks = format === "vf04" ? vf04TaskRecords(raw) : new Map<number, Record<string, unknown>>();
  const seen = new Set<string>();
  const kept: EvalRollout[] = [];
  const keptLines: string[] = [];
  let redo = 0;
  rows.forEach((row, i) => {
    const key = `${row.example_id}:${row.rollout_index}`;
    if (row.error) {
      redo++;
      return;
    }
    if (seen.has(key)) return;
    seen.add(key);
    kept.push(row);
    keptLines.push(lines[i] as string);
  });
  // Kept lines are rewritten byte for byte (a vf-eval row keeps every field and number as it wrote them).
  if (redo || droppedTrailing || kept.length !== rows.length) await writeFileAtomic(path, keptLines.map((l) => `${l}\n`).join(""));
  return { rows: kept, redo, droppedTrailing, vf04Tasks };
}

/** The `task` record of each row (`task.data.idx`) in verifiers 0.4 episodes other than edgegym's: one verifiers hashed (`task.hash`) over one it did not. */
function vf04TaskRecords(raw: readonly unknown[]): Map<number, Record<string, unknown>> {
  const out = new Map<number, Record<string, unknown>>();
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
  for (const episode of raw) {
    if (!isObject(episode) || !isObject(episode.task) || !isObject(episode.task.data) || episode.task.type === EDGEGYM_TASK_TYPE) continue;
    const idx = episode.task.data.idx;
    if (typeof idx !== "number" || !Number.isInteger(idx)) continue;
    const had = out.get(idx);
    if (!had || (typeof had.hash !== "string" && typeof episode.task.hash === "string")) out.set(idx, episode.task);
  }
  return out;
}

export interface ResumeMatch {
  envId: string;
  model: string;
  rolloutsPerExample: number;
  numExamples: number;
  split: string;
  seed: number;
  /** A seated environment's: who plays each seat (resolveRunSeats). */
  seats?: Readonly<Record<string, string>> | undefined;
}

const sameSeats = (a: Readonly<Record<string, string>> | undefined, b: Readonly<Record<string, string>> | undefined): boolean =>
  JSON.stringify(Object.entries(a ?? {}).sort()) === JSON.stringify(Object.entries(b ?? {}).sort());

/** Why a saved run cannot be continued with these settings, or null when it can. */
export function resumeMismatch(saved: Partial<RunMetadata>, want: ResumeMatch): string | null {
  const problems: string[] = [];
  // Only what the run recorded is checked: vf-eval 0.3 records no split or seed, verifiers 0.4 no metadata.json at all.
  if (saved.env_id !== undefined && saved.env_id !== want.envId) problems.push(`env ${saved.env_id} ≠ ${want.envId}`);
  if (saved.model !== undefined && saved.model !== want.model) problems.push(`model ${saved.model} ≠ ${want.model}`);
  if (saved.rollouts_per_example !== undefined && saved.rollouts_per_example !== want.rolloutsPerExample) problems.push(`rollouts per example ${saved.rollouts_per_example} ≠ ${want.rolloutsPerExample}`);
  if (saved.num_examples !== undefined && saved.num_examples > want.numExamples) problems.push(`the run had ${saved.num_examples} examples, more than ${want.numExamples}`);
  if (saved.split !== undefined && saved.split !== want.split) problems.push(`split ${saved.split} ≠ ${want.split}`);
  if (saved.seed !== undefined && saved.seed !== want.seed) problems.push(`seed ${saved.seed} ≠ ${want.seed}`);
  if (saved.seats !== undefined && !sameSeats(saved.seats, want.seats)) problems.push(`seats ${formatAssignment(saved.seats)} ≠ ${want.seats ? formatAssignment(want.seats) : "none"}`);
  return problems.length ? problems.join("; ") : null;
}

/** The newest run under `<base>/evals/<env>--<model>` with these settings and rollouts still to do. */
export async function findResumableRun(outputBase: string, want: ResumeMatch): Promise<string | null> {
  const parent = runsDirFor(outputBase, want.envId, want.model);
  if (!existsSync(parent)) return null;
  const candidates: { dir: string; mtime: number }[] = [];
  for (const name of await readdir(parent)) {
    const dir = join(parent, name);
    if (!existsSync(join(dir, METADATA_FILE))) continue;
    candidates.push({ dir, mtime: (await stat(join(dir, METADATA_FILE))).mtimeMs });
  }
  candidates.sort((a, b) => b.mtime - a.mtime);
  for (const { dir } of candidates) {
    let saved: RunMetadata;
    try {
      saved = await readMetadata(dir);
    } catch {
      continue;
    }
    if (resumeMismatch(saved, want)) continue;
    if (saved.status === "completed" && saved.num_examples === want.numExamples) continue;
    return dir;
  }
  return null;
}
