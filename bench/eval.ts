/**
 * `npm run bench:eval`: rollouts per second of `edgegym eval` against an OpenAI-compatible
 * server that answers at once (bench/instant-model-server.ts), so what is measured is
 * the evaluator's own overhead: in-process, and through an edgegym server (--server),
 * at concurrency 1, 32 and 256. Every process is real and on 127.0.0.1: the model
 * server, `edgegym serve` on a SQLite file, and the built CLI (bin/edgegym.js).
 *
 *   npm run bench:eval                   # 512 rollouts a run, median of 3
 *   npm run bench:eval -- --rollouts 256 --repeat 1
 *
 * The rate is rollouts / run time as the CLI records it in metadata.json (time_ms:
 * from the first rollout scheduled to the last written), so process start-up is left out.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { rollouts: { type: "string", default: "512" }, repeat: { type: "string", default: "3" } } });
const ROLLOUTS = Number(values.rollouts);
const REPEAT = Number(values.repeat);
const PER_EXAMPLE = 4;
const CONCURRENCY = [1, 32, 256];
const root = resolve(import.meta.dirname, "..");
const work = mkdtempSync(join(tmpdir(), "edgegym-bench-eval-"));
const children: ChildProcess[] = [];

function start(command: string[], pattern: RegExp): Promise<string> {
  const child = spawn(process.execPath, command, { cwd: root, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, EDGEGYM_API_KEYS: "" } });
  children.push(child);
  return new Promise((done, fail) => {
    let text = "";
    const onData = (c: Buffer): void => {
      text += c.toString();
      const m = pattern.exec(text);
      if (m) done(m[1] as string);
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.on("exit", (code) => fail(new Error(`${command.join(" ")} exited ${code}:\n${text}`)));
  });
}

function runEval(args: string[]): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [join(root, "bin/edgegym.js"), "eval", ...args], { cwd: root, stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr?.on("data", (c: Buffer) => (err += c.toString()));
    child.on("exit", (code) => (code === 0 ? done() : fail(new Error(`edgegym eval exited ${code}:\n${err}`))));
  });
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function main(): Promise<void> {
  const modelUrl = await start(["--import", "tsx", "bench/instant-model-server.ts"], /(http:\/\/127\.0\.0\.1:\d+\/v1)/);
  const serverUrl = await start(["bin/edgegym.js", "serve", "--port", "0", "--db", join(work, "bench.db")], /listening on (http:\/\/\S+?) /);
  const rows: { mode: string; concurrency: number; rates: number[]; errors: number }[] = [];
  for (const mode of ["in-process", "--server"] as const) {
    for (const concurrency of CONCURRENCY) {
      const rates: number[] = [];
      let errors = 0;
      for (let i = 0; i < REPEAT; i++) {
        const out = join(work, `${mode}-${concurrency}-${i}`);
        await runEval([
          "reverse-text", "-m", "instant", "-b", modelUrl, "--split", "train",
          "-n", String(ROLLOUTS / PER_EXAMPLE), "-r", String(PER_EXAMPLE), "-c", String(concurrency), "-o", out,
          ...(mode === "--server" ? ["--server", serverUrl] : []),
        ]);
        const parent = join(out, "evals", "reverse-text--instant");
        const meta = JSON.parse(readFileSync(join(parent, readdirSync(parent)[0] as string, "metadata.json"), "utf8")) as { completed_rollouts: number; time_ms: number; summary: { errors: number } };
        rates.push(meta.completed_rollouts / (meta.time_ms / 1000));
        errors += meta.summary.errors;
      }
      rows.push({ mode, concurrency, rates, errors });
      console.error(`${mode.padEnd(10)} c=${String(concurrency).padStart(3)}  ${rates.map((r) => r.toFixed(0)).join(", ")} rollouts/s`);
    }
  }
  const header = `edgegym eval, reverse-text, ${ROLLOUTS} rollouts a run (${ROLLOUTS / PER_EXAMPLE} rows × ${PER_EXAMPLE}), instant model; median of ${REPEAT}; node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? "?"})`;
  const table = [
    "| path | concurrency 1 | concurrency 32 | concurrency 256 |",
    "| --- | ---: | ---: | ---: |",
    ...(["in-process", "--server"] as const).map((mode) => `| ${mode === "in-process" ? "in-process" : "through `edgegym serve` (--server)"} | ${CONCURRENCY.map((c) => `${median(rows.find((r) => r.mode === mode && r.concurrency === c)?.rates ?? [0]).toFixed(0)} rollouts/s`).join(" | ")} |`),
  ].join("\n");
  console.log(`${header}\n\n${table}`);
  if (rows.some((r) => r.errors)) console.log(`\nfailed rollouts: ${rows.map((r) => `${r.mode} c=${r.concurrency}: ${r.errors}`).join(", ")}`);
  const resultsDir = join(root, "bench", "results");
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, `eval-${new Date().toISOString().replaceAll(":", "-")}.json`), `${JSON.stringify({ header, rows }, null, 2)}\n`);
}

try {
  await main();
} finally {
  for (const c of children) c.kill("SIGTERM");
  rmSync(work, { recursive: true, force: true });
}
