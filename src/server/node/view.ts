import { readdir, readFile, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { serve, type ServerType } from "@hono/node-server";
import { OpenAPIHono } from "@hono/zod-openapi";
import type { AddressInfo } from "node:net";
import { detectRunFormat, METADATA_FILE, readRunRollouts } from "../../eval/node/run-dir.js";
import { SummaryBuilder } from "../../eval/stats.js";
import { EvalRequest, EvalSummary, type EvalJob, type EvalRollout, type EvalStatus } from "../../protocol/index.js";
import { registerConsoleRoutes } from "../console/routes.js";
import type { AppEnv } from "../context.js";
import { ApiError, errorResponse, handleError } from "../errors.js";
import { requestId } from "../middleware/request-id.js";
import { consoleFilesOnDisk } from "./console-files.js";

export const VIEW_USAGE = `edgegym view RUN_DIR... [--port 8788] [--host 127.0.0.1]

Serves the web console's evaluation pages (/ui/evals) for runs on disk: each RUN_DIR is a run
(results.jsonl or traces.jsonl beside metadata.json, as edgegym eval and verifiers' vf-eval
write them) or a folder holding runs (e.g. outputs/, searched three levels deep). Read-only.`;

/** Most runs one view serves, and how deep it looks for them: a mistyped `/` must not walk the disk. */
const MAX_RUNS = 500;
const MAX_DEPTH = 3;

interface ViewRun {
  job: EvalJob;
  rows: EvalRollout[];
  dir: string;
}

async function findRunDirs(dir: string, depth: number, found: string[]): Promise<void> {
  if (found.length >= MAX_RUNS) return;
  if (detectRunFormat(dir)) {
    found.push(dir);
    return;
  }
  if (depth >= MAX_DEPTH) return;
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) if (e.isDirectory() && !e.name.startsWith(".")) await findRunDirs(join(dir, e.name), depth + 1, found);
}

type Meta = Record<string, unknown>;
const num = (v: unknown, fallback: number): number => (typeof v === "number" && Number.isFinite(v) ? v : fallback);
const str = (v: unknown, fallback: string): string => (typeof v === "string" && v ? v : fallback);
const obj = (v: unknown): Record<string, unknown> => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/** vf-eval writes `date` as "YYYY-MM-DD HH:MM:SS"; edgegym as ISO. Anything else: the folder's time. */
function isoDate(value: unknown, fallbackMs: number): string {
  const ms = typeof value === "string" ? Date.parse(value.includes("T") ? value : value.replace(" ", "T")) : NaN;
  return new Date(Number.isFinite(ms) ? ms : fallbackMs).toISOString();
}

/**
 * One run directory as an EvalJob: its metadata.json as edgegym or vf-eval wrote it (fields
 * missing from vf-eval's are taken from the rows), the summary recomputed from the rows
 * when the file has none of edgegym's shape.
 */
async function loadRun(dir: string, id: string): Promise<ViewRun> {
  let meta: Meta = {};
  try {
    meta = obj(JSON.parse(await readFile(join(dir, METADATA_FILE), "utf8")));
  } catch {
    // a run without metadata.json (cut short): everything comes from the rows
  }
  const envId = str(meta.env_id ?? meta.env, "unknown");
  const { rows } = await readRunRollouts(dir, envId);
  const perExample = new Map<number, number>();
  for (const r of rows) perExample.set(r.example_id, (perExample.get(r.example_id) ?? 0) + 1);
  const rolloutsPerExample = Math.max(1, num(meta.rollouts_per_example, Math.max(1, ...perExample.values())));
  const passThreshold = num(meta.pass_threshold, 0.5);
  const stored = EvalSummary.safeParse(meta.summary);
  let summary: EvalSummary;
  if (stored.success) summary = stored.data;
  else {
    const builder = new SummaryBuilder(passThreshold, rolloutsPerExample);
    for (const r of rows) builder.add(r);
    // vf-eval 0.3.1 writes only `time`, in seconds; edgegym writes both.
    summary = builder.build(num(meta.time_ms, num(meta.time, 0) * 1000));
  }
  const model = str(meta.model, "unknown");
  const sampling = obj(meta.sampling_args);
  const request = EvalRequest.parse({
    env_id: envId,
    model,
    num_examples: Math.max(1, num(meta.num_examples, perExample.size || 1)),
    rollouts_per_example: Math.min(1024, rolloutsPerExample),
    ...(typeof sampling.temperature === "number" ? { temperature: sampling.temperature } : {}),
    ...(typeof sampling.max_tokens === "number" && sampling.max_tokens >= 1 ? { max_tokens: sampling.max_tokens } : {}),
    env_args: obj(meta.env_args),
    pass_threshold: passThreshold,
  });
  const total = num(meta.total_rollouts, rows.length);
  const statusOf: Record<string, EvalStatus> = { completed: "completed", failed: "failed" };
  // vf-eval's metadata has no status: a run it wrote is complete once written.
  const status: EvalStatus = meta.status === undefined ? "completed" : (statusOf[String(meta.status)] ?? "cancelled");
  const created = isoDate(meta.date, (await stat(dir)).mtimeMs);
  const job: EvalJob = {
    eval_id: id,
    status,
    env_id: envId,
    env_version: str(obj(meta.version_info).env_version, "?"),
    model,
    request,
    progress: { total: Math.max(total, rows.length), done: rows.length, errors: summary.errors, mean_reward: rows.length ? summary.reward.mean : null, rollouts_per_second: summary.rollouts_per_second || null },
    summary,
    error: status === "cancelled" ? `the run stopped after ${rows.length} of ${total} rollouts (status ${String(meta.status)}); edgegym eval --resume continues it` : typeof meta.error === "string" ? meta.error : null,
    created_at: created,
    started_at: created,
    finished_at: created,
  };
  return { job, rows, dir };
}

export async function loadRuns(paths: readonly string[]): Promise<ViewRun[]> {
  const dirs: string[] = [];
  for (const p of paths) await findRunDirs(resolve(p), 0, dirs);
  const runs: ViewRun[] = [];
  for (const [i, dir] of dirs.entries()) runs.push(await loadRun(dir, `run-${i + 1}`));
  return runs;
}

/**
 * The console over runs on disk: the same pages as a server's evaluations, backed by the
 * read-only subset of the eval routes they use (list, job, results). Runs are read once at start.
 */
export function createViewApp(runs: readonly ViewRun[], assets = consoleFilesOnDisk()): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>();
  app.use("*", requestId());
  const byId = new Map(runs.map((r) => [r.job.eval_id, r]));
  const find = (id: string): ViewRun => {
    const run = byId.get(id);
    if (!run) throw new ApiError("eval_not_found", `no run ${id} in this view`);
    return run;
  };
  app.get("/v1/evals", (c) => c.json({ evals: runs.map((r) => r.job) }));
  app.get("/v1/evals/:id", (c) => c.json(find(c.req.param("id")).job));
  app.get("/v1/evals/:id/results", (c) => c.body(find(c.req.param("id")).rows.map((r) => JSON.stringify(r)).join("\n") + "\n", 200, { "Content-Type": "application/x-ndjson" }));
  app.get("/", (c) => c.redirect("/ui/evals", 302));
  registerConsoleRoutes(app, assets);
  app.notFound((c) => errorResponse(c, new ApiError("route_not_found", "edgegym view serves evaluation runs only: see /ui/evals")));
  app.onError(handleError);
  return app;
}

export async function viewCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { port: { type: "string", default: "8788" }, host: { type: "string", default: "127.0.0.1" }, help: { type: "boolean", short: "h" } } });
  if (values.help || positionals.length === 0) {
    console.log(VIEW_USAGE);
    return values.help ? 0 : 2;
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`--port must be 0–65535, not ${values.port}`);
    return 2;
  }
  const runs = await loadRuns(positionals);
  if (runs.length === 0) {
    console.error(`no runs found under ${positionals.join(", ")} (a run holds results.jsonl or traces.jsonl)`);
    return 1;
  }
  const server: ServerType = await new Promise((done) => {
    const s = serve({ fetch: createViewApp(runs).fetch, port, hostname: values.host }, () => done(s));
  });
  const address = server.address() as AddressInfo;
  for (const r of runs) console.log(`${r.job.eval_id}  ${r.job.env_id}  ${r.job.model}  ${r.rows.length} rollouts  ${r.dir}`);
  console.log(`edgegym view listening on http://${values.host}:${address.port}/ui/evals`);
  await new Promise<void>((done) => {
    process.once("SIGINT", done);
    process.once("SIGTERM", done);
  });
  server.close();
  return 0;
}
