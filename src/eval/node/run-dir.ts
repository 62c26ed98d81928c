import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, open, readdir, readFile, rename, stat, writeFile, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import type { EvalRollout } from "../../protocol/index.js";
import type { RunMetadata } from "../metadata.js";

export const RESULTS_FILE = "results.jsonl";
export const METADATA_FILE = "metadata.json";

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
 * Appends rollouts to results.jsonl as they finish, one line each, in order of
 * completion. Writes go one after another through a single handle, so lines never
 * interleave; what was written survives a crash or Ctrl-C.
 */
export class ResultsWriter {
  private chain: Promise<void> = Promise.resolve();

  private constructor(private readonly handle: FileHandle) {}

  static async open(dir: string): Promise<ResultsWriter> {
    await mkdir(dir, { recursive: true });
    return new ResultsWriter(await open(join(dir, RESULTS_FILE), "a"));
  }

  write(row: EvalRollout): Promise<void> {
    const line = `${JSON.stringify(row)}\n`;
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
}

/**
 * Gets a run directory ready to continue: keeps rollouts that finished, takes out failed
 * ones (they run again) and a half-written last line, rewriting results.jsonl only when
 * something was taken out.
 */
export async function prepareResume(dir: string): Promise<ResumeState> {
  const path = join(dir, RESULTS_FILE);
  if (!existsSync(path)) return { rows: [], redo: 0, droppedTrailing: false };
  const { rows, droppedTrailing } = await readResults(path);
  const seen = new Set<string>();
  const kept: EvalRollout[] = [];
  let redo = 0;
  for (const row of rows) {
    const key = `${row.example_id}:${row.rollout_index}`;
    if (row.error) {
      redo++;
      continue;
    }
    if (seen.has(key)) continue;
    seen.add(key);
    kept.push(row);
  }
  if (redo || droppedTrailing || kept.length !== rows.length) await writeFileAtomic(path, kept.map((r) => `${JSON.stringify(r)}\n`).join(""));
  return { rows: kept, redo, droppedTrailing };
}

export interface ResumeMatch {
  envId: string;
  model: string;
  rolloutsPerExample: number;
  numExamples: number;
  split: string;
  seed: number;
}

/** Why a saved run cannot be continued with these settings, or null when it can. */
export function resumeMismatch(saved: RunMetadata, want: ResumeMatch): string | null {
  const problems: string[] = [];
  if (saved.env_id !== want.envId) problems.push(`env ${saved.env_id} ≠ ${want.envId}`);
  if (saved.model !== want.model) problems.push(`model ${saved.model} ≠ ${want.model}`);
  if (saved.rollouts_per_example !== want.rolloutsPerExample) problems.push(`rollouts per example ${saved.rollouts_per_example} ≠ ${want.rolloutsPerExample}`);
  if (saved.num_examples > want.numExamples) problems.push(`the run had ${saved.num_examples} examples, more than ${want.numExamples}`);
  if (saved.split !== want.split) problems.push(`split ${saved.split} ≠ ${want.split}`);
  if (saved.seed !== want.seed) problems.push(`seed ${saved.seed} ≠ ${want.seed}`);
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
