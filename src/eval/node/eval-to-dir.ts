import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import type { EnvRegistry } from "../../envs/index.js";
import type { EvalRequest, EvalSummary } from "../../protocol/index.js";
import type { EpisodeDriver } from "../driver.js";
import { HttpDriver } from "../http-driver.js";
import { InProcessDriver } from "../in-process-driver.js";
import { buildMetadata, type RunMetadata } from "../metadata.js";
import type { ChatModel } from "../model.js";
import { OpenAIChatModel } from "../openai-model.js";
import { pendingRollouts, resolveExampleCount, resolveSplit, rolloutKey, rolloutSeed, samplingArgs } from "../plan.js";
import type { RetryPolicy } from "../retry.js";
import type { RolloutSpec } from "../rollout.js";
import { runEval } from "../runner.js";
import { SummaryBuilder } from "../stats.js";
import { formatAssignment, resolveRunSeats, rolloutSeats, SeatSummaryBuilder, type SeatSummary } from "../seats.js";
import type { ProgressDisplay } from "./progress.js";
import { basename } from "node:path";
import { vf04TaskFits, type VfFormat } from "../vf-formats.js";
import { detectRunFormat, findResumableRun, readRunRollouts, newRunDir, prepareResume, readResumeMetadata, ResultsWriter, resumeMismatch, writeMetadata } from "./run-dir.js";

export interface EvalToDirOptions {
  /** Validated options (EvalRequest.parse). `model` is required here. */
  request: EvalRequest & { model: string };
  /** The model's OpenAI-compatible endpoint. */
  baseUrl: string;
  apiKey?: string | undefined;
  /** Run episodes on this edgegym server instead of in this process. */
  server?: string | undefined;
  serverApiKey?: string | undefined;
  /** Environments for the in-process path. */
  registry: Pick<EnvRegistry, "get" | "resolve">;
  /** Episodes run through this driver instead (Harbor tasks on this machine's Docker: harbor-local.ts). */
  driver?: EpisodeDriver;
  /**
   * A seated environment's players (`--seats`): `client` (the model) or a policy of the
   * environment's, per seat; the environment's defaults for seats left out.
   */
  seats?: Record<string, string> | undefined;
  /** Results go under `<outputBase>/evals/<env>--<model>/<run id>/`. */
  outputBase: string;
  /** true: continue the newest unfinished matching run; a path: continue that run. */
  resume?: boolean | string;
  signal?: AbortSignal;
  display?: ProgressDisplay;
  /** Print every rollout as it finishes. */
  verbose?: boolean;
  /** Notes for the user (resume decisions, capped example counts). */
  note?: (line: string) => void;
  /** First backoff of model retries (tests shorten it). */
  retryBaseDelayMs?: number;
  /** Injected model (tests); default OpenAIChatModel over baseUrl. */
  model?: ChatModel;
  edgegymVersion?: string;
  /** How often metadata.json is refreshed during the run. */
  metadataEveryMs?: number;
  /**
   * Which verifiers generation's files to write: `vf03` (results.jsonl, the default) or
   * `vf04` (traces.jsonl). A resumed run keeps the format it was made in.
   */
  format?: VfFormat;
}

export interface EvalToDirResult {
  runDir: string;
  status: RunMetadata["status"];
  summary: EvalSummary;
  metadata: RunMetadata;
  numExamples: number;
  driver: string;
  /** Rollouts run in this session (the rest were already in the run directory). */
  ranNow: number;
  /** A seated environment's: who played each seat, and each seat's figures (null for a one-player run). */
  seats: Record<string, string> | null;
  seatSummaries: Record<string, SeatSummary> | null;
}

/**
 * `edgegym eval` without the terminal: plans the rollouts, continues a saved run when
 * asked, runs them through the chosen driver, appends each to results.jsonl as it
 * finishes and keeps metadata.json current, so an interrupted run loses nothing done.
 */
export async function evalToDir(opts: EvalToDirOptions): Promise<EvalToDirResult> {
  const { request } = opts;
  const note = opts.note ?? (() => {});
  const retry: RetryPolicy = { maxRetries: request.max_retries, ...(opts.retryBaseDelayMs !== undefined ? { baseDelayMs: opts.retryBaseDelayMs } : {}) };
  const driver: EpisodeDriver = opts.driver ?? (opts.server
    ? new HttpDriver({ baseUrl: opts.server, apiKey: opts.serverApiKey, retry, timeoutMs: request.timeout_seconds * 1000 })
    : new InProcessDriver(opts.registry));
  const env = await driver.describe(request.env_id);
  const seats = resolveRunSeats(env, opts.seats);
  if (seats) note(`seats: ${formatAssignment(seats)} (client: the model${Object.values(seats).filter((p) => p === "client").length > 1 ? ", in self-play: one conversation per seat" : ""})`);
  const split = resolveSplit(env, request.split);
  const { count: numExamples, note: capped } = resolveExampleCount(env, split, request.num_examples);
  if (capped) note(capped);
  const model = opts.model ?? new OpenAIChatModel({ model: request.model, baseUrl: opts.baseUrl, apiKey: opts.apiKey, timeoutMs: request.timeout_seconds * 1000 });
  const sampling = samplingArgs(request);

  const match = { envId: env.id, model: request.model, rolloutsPerExample: request.rollouts_per_example, numExamples, split, seed: request.seed, seats };
  let runDir: string | null = null;
  let priorWallMs = 0;
  // Resuming: the run's metadata.json (its keys are kept) and, for vf04, each row's task as the run recorded it.
  let previousMeta: Partial<RunMetadata> | undefined;
  let vf04Tasks: Map<number, Record<string, unknown>> | undefined;
  if (typeof opts.resume === "string") {
    if (!existsSync(opts.resume)) throw new Error(`--resume: ${opts.resume} does not exist`);
    const saved = await readResumeMetadata(opts.resume);
    if (saved.env_id === undefined) note(`${opts.resume} has no metadata.json (verifiers 0.4 writes none): resuming with these settings`);
    const mismatch = resumeMismatch(saved, match);
    if (mismatch) throw new Error(`cannot resume ${opts.resume}: ${mismatch}. Use the run's settings, or start a new run.`);
    runDir = opts.resume;
  } else if (opts.resume) {
    runDir = await findResumableRun(opts.outputBase, match);
    if (!runDir) note("no unfinished run with these settings to resume; starting a new one");
  }
  const summary = new SummaryBuilder(request.pass_threshold, request.rollouts_per_example);
  const seatSummary = new SeatSummaryBuilder();
  const done = new Set<string>();
  let format: VfFormat = opts.format ?? "vf03";
  if (runDir) {
    const found = detectRunFormat(runDir);
    if (found && opts.format && found !== opts.format) throw new Error(`cannot resume ${runDir} as ${opts.format}: it holds ${found} files; drop --format or start a new run`);
    if (found) format = found;
    // verifiers 0.4 writes no metadata.json, so its episodes are what say which environment they were.
    const others = [...new Set((found ? (await readRunRollouts(runDir, env.id)).rows : []).map((r) => r.task).filter((t) => t !== env.id))];
    if (others.length) throw new Error(`cannot resume ${runDir}: its rollouts are of ${others.join(", ")}, not ${env.id}`);
    const saved = await readResumeMetadata(runDir);
    previousMeta = saved;
    // vf-eval 0.3 records its run time as `time`, in seconds.
    const vfTime = (saved as { time?: unknown }).time;
    priorWallMs = saved.time_ms ?? (typeof vfTime === "number" ? vfTime * 1000 : 0);
    const state = await prepareResume(runDir, env.id);
    vf04Tasks = state.vf04Tasks;
    for (const row of state.rows) {
      summary.add(row);
      seatSummary.add(row);
      done.add(rolloutKey(row.example_id, row.rollout_index));
    }
    note(`resuming ${runDir}: ${state.rows.length} rollouts done${state.redo ? `, ${state.redo} failed ones to run again` : ""}${state.droppedTrailing ? ", a half-written line dropped" : ""}`);
  } else {
    runDir = newRunDir(opts.outputBase, env.id, request.model);
  }
  await mkdir(runDir, { recursive: true });

  const pending = pendingRollouts(numExamples, request.rollouts_per_example, done);
  const examples = pending.length ? await driver.examples(env.id, split, 0, numExamples) : [];
  const specs: RolloutSpec[] = pending.map(({ exampleId, rolloutIndex }) => {
    const example = examples[exampleId];
    if (!example) throw new Error(`${env.id}: row ${exampleId} of split "${split}" is missing`);
    return { example, rolloutIndex, seed: rolloutSeed(request.seed, exampleId, rolloutIndex) };
  });
  const misfits = [...new Set(specs.filter((s) => { const t = vf04Tasks?.get(s.example.index); return t && !vf04TaskFits(t, s.example.prompt); }).map((s) => s.example.index))];
  if (misfits.length) note(`row(s) ${misfits.join(", ")}: the run's episodes record another prompt than ${env.id}'s; their new episodes record ${env.id}'s task, which verifiers' own --resume will not count as done`);

  const sessionStart = performance.now();
  const wall = (): number => priorWallMs + (performance.now() - sessionStart);
  const metadata = (status: RunMetadata["status"], error: string | null): RunMetadata =>
    buildMetadata({
      request,
      env,
      model: request.model,
      baseUrl: model.baseUrl,
      driver: driver.location,
      split,
      numExamples,
      sampling,
      summary: summary.build(wall()),
      status,
      error,
      edgegymVersion: opts.edgegymVersion ?? "0.1.0",
      format,
      previous: previousMeta,
      seats,
      seatSummaries: seatSummary.build(),
    });
  await writeMetadata(runDir, metadata("running", null));

  const total = numExamples * request.rollouts_per_example;
  const figures = (ranNow: number) => ({
    done: summary.count,
    total,
    meanReward: summary.meanReward,
    errors: summary.errorCount,
    rate: ranNow / Math.max(1e-3, (performance.now() - sessionStart) / 1000),
  });
  opts.display?.start(figures(0));
  const writer = await ResultsWriter.open(runDir, format, { envId: env.id, model: request.model, runId: basename(runDir), sampling, newId: () => randomUUID().replaceAll("-", ""), tasks: vf04Tasks });
  let ranNow = 0;
  let lastMeta = performance.now();
  let metaWrite: Promise<void> = Promise.resolve();
  const everyMs = opts.metadataEveryMs ?? 2_000;
  const dir = runDir;
  let outcome: Awaited<ReturnType<typeof runEval>>;
  try {
    outcome = await runEval({
      envId: env.id,
      split,
      envArgs: request.env_args ?? {},
      seats,
      driver,
      model,
      sampling,
      retry,
      runKey: randomUUID().slice(0, 12),
      specs,
      concurrency: request.max_concurrent,
      ...(opts.signal ? { signal: opts.signal } : {}),
      onRollout: async (row) => {
        await writer.write(row);
        summary.add(row);
        seatSummary.add(row);
        ranNow++;
        if (row.error) opts.display?.log(`rollout ${row.example_id}#${row.rollout_index} failed: ${row.error.error_chain_str}`);
        else if (opts.verbose) {
          const bySeat = rolloutSeats(row);
          const rewards = bySeat ? `rewards ${Object.entries(bySeat).map(([seat, s]) => `${seat} ${s.reward.toFixed(3)}`).join(" ")}` : `reward ${row.reward.toFixed(3)}`;
          opts.display?.log(`rollout ${row.example_id}#${row.rollout_index} ${rewards} · ${row.stop_condition} · ${row.metrics.turns ?? "?"} turn(s) · ${Math.round(row.timing.total_ms)} ms`);
        }
        opts.display?.update(figures(ranNow));
        if (performance.now() - lastMeta >= everyMs) {
          lastMeta = performance.now();
          metaWrite = metaWrite.then(() => writeMetadata(dir, metadata("running", null)));
        }
      },
    });
  } finally {
    await writer.close();
    await metaWrite;
    opts.display?.stop();
  }
  const status: RunMetadata["status"] = outcome.fatal ? "failed" : outcome.interrupted ? "interrupted" : "completed";
  const final = metadata(status, outcome.fatal ? outcome.fatal.error_chain_str : null);
  await writeMetadata(runDir, final);
  return { runDir, status, summary: final.summary, metadata: final, numExamples, driver: driver.location, ranNow, seats: seats ?? null, seatSummaries: final.seat_summaries ?? null };
}
