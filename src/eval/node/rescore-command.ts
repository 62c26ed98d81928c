import { existsSync, statSync } from "node:fs";
import { open, readFile, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { builtinEnvs, envContentHash, EnvRegistry, judgeCatalogFrom, type AnyEnvironment } from "../../envs/index.js";
import { EvalRollout, type EvalSummary, type Split } from "../../protocol/index.js";
import { loadEnvModules } from "../../envs/load-env-modules.node.js";
import type { RunMetadata } from "../metadata.js";
import { rescoreRollout, type ReplayOutcome } from "../rescore.js";
import { SummaryBuilder } from "../stats.js";
import { SeatSummaryBuilder, type SeatSummary } from "../seats.js";
import { createProgressDisplay, type ProgressDisplay } from "./progress.js";
import { withFlatTiming } from "../vf-formats.js";
import { detectRunFormat, METADATA_FILE, readResults, readRunRollouts, RESULTS_FILE, rolloutsFile, TRACES_FILE } from "./run-dir.js";

export const RESCORE_USAGE = `edgegym rescore RUN_DIR — score an evaluation's stored rollouts again, without the model

RUN_DIR is a directory \`edgegym eval\` wrote (results.jsonl and metadata.json). Each
completed rollout is scored with the rubric of the environment as this install has it,
from the row's own prompt, completion, answer and info. The environment is replayed over
the stored messages (setup, tools, replies; never the model) to rebuild the state its
rubric reads; a replay that no longer matches the transcript scores with no state.
Failed rollouts are copied as they were. The results go to a new file beside the old one:
results.rescored-<UTC time>.jsonl, and metadata.rescored-<UTC time>.json with the summary.
Nothing is overwritten.

  --no-replay             do not replay the environment: rubrics get no state (null)
  -c, --max-concurrent N  rollouts scored at once (default 8; an LLM judge is called this many at once)
      --env-module PATH   load environments from a module (repeatable)
  -o, --output FILE       where the rescored results go (must not exist)
  -h, --help`;

/** What a rescore wrote and found: the new file, the old and new summaries, how each row went. */
export interface RescoreRunResult {
  output: string;
  metadataOutput: string;
  envId: string;
  before: EvalSummary;
  after: EvalSummary;
  rescored: number;
  skipped: number;
  /** Why rows were kept as they were, with how many each. */
  skippedReasons: Record<string, number>;
  changed: number;
  /** A seated environment's per-seat figures before and after (null for a one-player run). */
  seatsBefore: Record<string, SeatSummary> | null;
  seatsAfter: Record<string, SeatSummary> | null;
  replay: Record<ReplayOutcome, number>;
  /** The run's environment version and hash (metadata.json), and this install's. */
  runVersion: { env_version: string; env_hash?: string | undefined };
  nowVersion: { env_version: string; env_hash: string };
}

export interface RescoreRunOptions {
  runDir: string;
  registry: Pick<EnvRegistry, "get">;
  replay?: boolean;
  maxConcurrent?: number;
  output?: string | undefined;
  display?: ProgressDisplay;
  /** The time in the new files' names (tests pin it). */
  now?: Date;
}

const stamp = (d: Date): string => d.toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");

async function readRunMetadata(dir: string): Promise<RunMetadata> {
  const path = join(dir, METADATA_FILE);
  if (!existsSync(path)) throw new Error(`${dir} has no ${METADATA_FILE}: not a run directory \`edgegym eval\` wrote`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(path, "utf8"));
  } catch (err) {
    throw new Error(`${path} is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  const m = parsed as Partial<RunMetadata>;
  if (typeof m !== "object" || m === null || typeof m.env_id !== "string" || (m.split !== "train" && m.split !== "eval")) {
    throw new Error(`${path} does not name the run's env_id and split; was it written by \`edgegym eval\`?`);
  }
  return parsed as RunMetadata;
}

/** Runs `work` over `items` with at most `limit` at once, keeping their order in the result. */
async function pool<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i] as T);
    }
  });
  await Promise.all(lanes);
  return out;
}

/**
 * `edgegym rescore` without the terminal: reads a run directory, rescores every completed
 * rollout with the environment as it is now, and writes new files beside the old ones.
 */
export async function rescoreRunDir(opts: RescoreRunOptions): Promise<RescoreRunResult> {
  const dir = opts.runDir;
  if (!existsSync(dir)) throw new Error(`${dir} does not exist`);
  if (!statSync(dir).isDirectory()) throw new Error(`${dir} is not a directory; give the run directory that holds ${RESULTS_FILE}`);
  const format = detectRunFormat(dir);
  if (!format) throw new Error(`${dir} has no ${RESULTS_FILE} or ${TRACES_FILE}: not a run directory \`edgegym eval\` wrote`);
  const resultsPath = join(dir, rolloutsFile(format));
  const metadata = await readRunMetadata(dir);
  const maxConcurrent = opts.maxConcurrent ?? 8;
  if (!Number.isInteger(maxConcurrent) || maxConcurrent < 1 || maxConcurrent > 1024) throw new Error(`--max-concurrent must be an integer from 1 to 1024, got ${maxConcurrent}`);
  const env: AnyEnvironment | undefined = opts.registry.get(metadata.env_id);
  if (!env) throw new Error(`no environment "${metadata.env_id}" here (the run's env_id); load it with --env-module`);
  // Either verifiers generation's rows, as edgegym rollouts (verifiers 0.3's nested timing folded back to edgegym's).
  const { rows: raw } = await readResults<unknown>(resultsPath);
  if (raw.length === 0) throw new Error(`${resultsPath} holds no rollouts: nothing to rescore`);
  const rows = format === "vf04" ? (await readRunRollouts(dir, metadata.env_id)).rows : raw.map(withFlatTiming);
  // Checked before anything is written: a row that is not a rollout stops the whole rescore.
  rows.forEach((row, i) => {
    const parsed = EvalRollout.safeParse(row);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new Error(`${resultsPath}: rollout ${i + 1} is not an edgegym rollout (${issue ? `${issue.path.join(".") || "(row)"}: ${issue.message}` : "invalid"})`);
    }
  });
  const rollouts = rows as EvalRollout[];

  const now = opts.now ?? new Date();
  const output = opts.output ?? join(dir, `results.rescored-${stamp(now)}.jsonl`);
  const metadataOutput = join(dirname(output), `${basename(output).replace(/\.jsonl$/, "").replace(/^results\./, "metadata.")}.json`);
  // "wx": fails when the file exists, so an earlier result is never overwritten.
  const handle = await open(output, "wx").catch((err: NodeJS.ErrnoException) => {
    throw new Error(err.code === "EEXIST" ? `${output} already exists; rescoring never overwrites, give another --output` : `cannot write ${output}: ${err.message}`, { cause: err });
  });

  const envHash = await envContentHash(env);
  const split: Split = metadata.split;
  const ctx = { env, envHash, split, envArgs: metadata.env_args ?? {}, replay: opts.replay ?? true };
  const rolloutsPerExample = metadata.rollouts_per_example || 1;
  const threshold = metadata.pass_threshold ?? 0.5;
  const before = new SummaryBuilder(threshold, rolloutsPerExample);
  const after = new SummaryBuilder(threshold, rolloutsPerExample);
  const seatsBefore = new SeatSummaryBuilder();
  const seatsAfter = new SeatSummaryBuilder();
  const skippedReasons: Record<string, number> = {};
  const replay: Record<ReplayOutcome, number> = { matched: 0, diverged: 0, off: 0, failed: 0 };
  let rescored = 0;
  let skipped = 0;
  let changed = 0;
  let done = 0;
  const started = performance.now();
  const figures = () => ({ done, total: rollouts.length, meanReward: done ? after.meanReward : null, errors: after.errorCount, rate: done / Math.max(1e-3, (performance.now() - started) / 1000) });
  opts.display?.start(figures());
  try {
    const results = await pool(rollouts, maxConcurrent, async (row) => {
      const result = await rescoreRollout(ctx, row);
      before.add(row);
      after.add(result.row);
      seatsBefore.add(row);
      seatsAfter.add(result.row);
      if (result.status === "skipped") {
        skipped++;
        skippedReasons[result.reason] = (skippedReasons[result.reason] ?? 0) + 1;
      } else {
        rescored++;
        replay[result.replay]++;
        if (result.row.reward !== row.reward) changed++;
      }
      done++;
      opts.display?.update(figures());
      return result;
    });
    // In the order of the source file, whatever order they finished in.
    // A vf03 row keeps the timing it had (verifiers 0.3's nested spans); rescoring does not change it.
    const timingOf = (i: number): unknown => (format === "vf03" ? (raw[i] as { timing?: unknown }).timing : undefined) ?? (results[i] as { row: EvalRollout }).row.timing;
    await handle.writeFile(results.map((r, i) => `${JSON.stringify({ ...r.row, timing: timingOf(i) })}\n`).join(""));
    await handle.sync();
  } catch (err) {
    // No half-written results file is left to be mistaken for a finished one.
    await handle.close();
    await unlink(output).catch(() => {});
    throw err;
  } finally {
    opts.display?.stop();
  }
  await handle.close();
  const wall = performance.now() - started;
  const result: RescoreRunResult = {
    output,
    metadataOutput,
    envId: env.id,
    before: before.build(metadata.time_ms ?? 0),
    after: after.build(wall),
    rescored,
    skipped,
    skippedReasons,
    changed,
    seatsBefore: seatsBefore.build(),
    seatsAfter: seatsAfter.build(),
    replay,
    runVersion: metadata.version_info ?? { env_version: "unknown" },
    nowVersion: { env_version: env.version, env_hash: envHash },
  };
  const rescoreMetadata = {
    ...metadata,
    date: now.toISOString(),
    avg_reward: result.after.reward.mean,
    avg_metrics: result.after.metrics,
    version_info: { ...metadata.version_info, env_version: env.version, env_hash: envHash },
    summary: result.after,
    ...(result.seatsAfter ? { seat_summaries: result.seatsAfter } : {}),
    rescore: {
      source: rolloutsFile(format),
      results: basename(output),
      previous_version_info: metadata.version_info ?? null,
      previous_avg_reward: result.before.reward.mean,
      rescored,
      skipped,
      skipped_reasons: skippedReasons,
      changed,
      replay,
      time_ms: wall,
    },
  };
  const metaHandle = await open(metadataOutput, "wx").catch((err: NodeJS.ErrnoException) => {
    throw new Error(err.code === "EEXIST" ? `${metadataOutput} already exists; rescoring never overwrites` : `cannot write ${metadataOutput}: ${err.message}`, { cause: err });
  });
  try {
    await metaHandle.writeFile(`${JSON.stringify(rescoreMetadata, null, 2)}\n`);
  } finally {
    await metaHandle.close();
  }
  return result;
}

const n3 = (v: number | undefined): string => (v !== undefined && Number.isFinite(v) ? v.toFixed(3) : "–");
const signed = (v: number): string => (Number.isFinite(v) ? `${v >= 0 ? "+" : ""}${v.toFixed(3)}` : "–");

/** The closing table: reward and each component's mean, before and after, and how the rows went. */
export function formatRescoreReport(r: RescoreRunResult): string {
  const out: string[] = [];
  const versions =
    r.runVersion.env_version === r.nowVersion.env_version && (r.runVersion.env_hash === undefined || r.runVersion.env_hash === r.nowVersion.env_hash)
      ? `${r.envId} ${r.nowVersion.env_version}`
      : `${r.envId} ${r.runVersion.env_version}${r.runVersion.env_hash ? ` (${r.runVersion.env_hash.slice(0, 19)})` : ""} → ${r.nowVersion.env_version} (${r.nowVersion.env_hash.slice(0, 19)})`;
  const failedOnly = Object.keys(r.skippedReasons).every((why) => why.startsWith("failed rollout"));
  out.push(`rescored ${r.rescored} of ${r.before.rollouts} rollouts · ${versions} · ${r.changed} changed reward · ${r.skipped} ${failedOnly ? "failed ones" : "others"} kept as they were`);
  for (const [why, n] of Object.entries(r.skippedReasons)) if (!why.startsWith("failed rollout")) out.push(`kept         ${n}: ${why}`);
  if (r.rescored) out.push(`replay       ${Object.entries(r.replay).filter(([, n]) => n > 0).map(([k, n]) => `${k} ${n}`).join(" · ")}`);
  const names = [...new Set([...r.before.components.map((c) => c.name), ...r.after.components.map((c) => c.name)])];
  const width = Math.max(12, ...names.map((n) => n.length + 2));
  out.push(`${"".padEnd(width)} ${"before".padStart(8)} ${"after".padStart(8)} ${"change".padStart(8)}`);
  out.push(`${"reward".padEnd(width)} ${n3(r.before.reward.mean).padStart(8)} ${n3(r.after.reward.mean).padStart(8)} ${signed(r.after.reward.mean - r.before.reward.mean).padStart(8)}`);
  for (const name of names) {
    const b = r.before.components.find((c) => c.name === name)?.mean;
    const a = r.after.components.find((c) => c.name === name)?.mean;
    out.push(`${`  ${name}`.padEnd(width)} ${n3(b).padStart(8)} ${n3(a).padStart(8)} ${(a !== undefined && b !== undefined ? signed(a - b) : "new/gone").padStart(8)}`);
  }
  for (const seat of [...new Set([...Object.keys(r.seatsBefore ?? {}), ...Object.keys(r.seatsAfter ?? {})])]) {
    const b = r.seatsBefore?.[seat]?.reward.mean;
    const a = r.seatsAfter?.[seat]?.reward.mean;
    out.push(`${`seat ${seat}`.padEnd(width)} ${n3(b).padStart(8)} ${n3(a).padStart(8)} ${(a !== undefined && b !== undefined ? signed(a - b) : "new/gone").padStart(8)}`);
  }
  const passB = r.before.pass_at_k["1"];
  const passA = r.after.pass_at_k["1"];
  if (passB !== undefined || passA !== undefined) out.push(`${"pass@1".padEnd(width)} ${n3(passB).padStart(8)} ${n3(passA).padStart(8)}`);
  out.push(`results: ${r.output}`);
  out.push(`summary: ${r.metadataOutput}`);
  return out.join("\n");
}

export async function rescoreCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      "no-replay": { type: "boolean" },
      "max-concurrent": { type: "string", short: "c" },
      "env-module": { type: "string", multiple: true },
      output: { type: "string", short: "o" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(RESCORE_USAGE);
    return 0;
  }
  if (positionals.length !== 1) throw new Error(`give one run directory (got ${positionals.length ? positionals.join(" ") : "none"}); see edgegym rescore --help`);
  const maxConcurrent = values["max-concurrent"] === undefined ? 8 : Number(values["max-concurrent"]);
  // The CLI user is the operator: judges come from their own environment, as for `edgegym eval`.
  const registry = new EnvRegistry("node", [...builtinEnvs, ...(await loadEnvModules(values["env-module"] ?? []))]).withServices({ judges: judgeCatalogFrom(env) });
  const result = await rescoreRunDir({
    runDir: positionals[0] as string,
    registry,
    replay: !values["no-replay"],
    maxConcurrent,
    output: values.output,
    display: createProgressDisplay(process.stderr),
  });
  console.log(formatRescoreReport(result));
  return 0;
}
