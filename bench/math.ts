/**
 * `npm run bench:math`: edgegym's verifyMath against math-verify (the PyPI package, in the
 * trainer adapter's test venv) on the same corpus — math-verify 0.9.0's own 276 test cases
 * (src/envs/math/math-verify-cases.json), issue 13's (issue-13-cases.json) and issue 28's
 * (issue-28-cases.json, which records math-verify's verdict per case: checked here) — on the same
 * machine, one run each: agreement with the expected verdicts, false positives, and time
 * per verify (math-verify: `parse` of both sides + `verify`; edgegym: `verifyMath`, which
 * extracts and compares). Neither side is warmed up: both include their first calls.
 *
 *   MATH_VERIFY_PYTHON=/path/to/python npm run bench:math   # default trainer-adapter/.venv
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { resolve } from "node:path";
import { expectedVerdict, KNOWN_MISSES, MATH_CASE_FILES, OVERRIDES, verifyCase, type MathVerifyCase as Case } from "../src/envs/math/math-verify-verdicts.js";

const root = resolve(import.meta.dirname, "..");
const files = MATH_CASE_FILES.map((f) => resolve(root, f));
const cases: Case[] = files.flatMap((f) => (JSON.parse(readFileSync(f, "utf8")) as { cases: Case[] }).cases);
const python = process.env.MATH_VERIFY_PYTHON ?? resolve(root, "trainer-adapter/.venv/bin/python");
if (!existsSync(python)) {
  console.error(`bench:math: no Python at ${python}; run scripts/test-python.sh (it installs math-verify) or set MATH_VERIFY_PYTHON`);
  process.exit(1);
}

const run = spawnSync(python, [resolve(root, "bench/math_verify_runner.py"), ...files], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
if (run.status !== 0) {
  console.error(run.stderr);
  console.error("bench:math: math-verify failed (is `math-verify==0.9.0` installed in that Python?)");
  process.exit(1);
}
const reference = JSON.parse(run.stdout) as { version: string; verdicts: boolean[]; seconds: number[]; cpuSeconds: number[] };

const ours: boolean[] = [];
const oursSeconds: number[] = [];
const oursCpuSeconds: number[] = [];
for (const c of cases) {
  const cpuStart = process.cpuUsage();
  const start = performance.now();
  let equal: boolean;
  try {
    equal = verifyCase(c);
  } catch {
    equal = false; // a refusal (too long) is a 0, as in a rubric
  }
  oursSeconds.push((performance.now() - start) / 1000);
  const cpu = process.cpuUsage(cpuStart);
  oursCpuSeconds.push((cpu.user + cpu.system) / 1e6);
  ours.push(equal);
}

const portedCount = cases.filter((c) => c.source.startsWith("tests/")).length;
const score = (verdicts: boolean[], subset: (c: Case) => boolean, expectedOf: (c: Case) => boolean) => {
  let agree = 0;
  let falsePositives = 0;
  let total = 0;
  cases.forEach((c, k) => {
    if (!subset(c)) return;
    total++;
    if (verdicts[k] === expectedOf(c)) agree++;
    else if (verdicts[k]) falsePositives++;
  });
  return `${agree}/${total} (${falsePositives} false positive${falsePositives === 1 ? "" : "s"})`;
};
const asWritten = (c: Case) => c.expected;
const ported = (c: Case) => c.source.startsWith("tests/");
const everything = () => true;
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const ms = (s: number) => `${(s * 1000).toFixed(3)} ms`;

const issue28 = (c: Case) => c.source.startsWith("issue 28");
const issue28Count = cases.filter(issue28).length;
const rows: [string, string, string][] = [
  ["", `math-verify ${reference.version}`, "edgegym verifyMath"],
  [`math-verify's ${portedCount} cases, expected as written`, score(reference.verdicts, ported, asWritten), score(ours, ported, asWritten)],
  [`issue 28's ${issue28Count} cases, expected as decided`, score(reference.verdicts, issue28, asWritten), score(ours, issue28, asWritten)],
  [`all ${cases.length} cases, expected as written`, score(reference.verdicts, everything, asWritten), score(ours, everything, asWritten)],
  [`all ${cases.length}, with the ${Object.keys(OVERRIDES).length} argued overrides`, score(reference.verdicts, everything, expectedVerdict), score(ours, everything, expectedVerdict)],
  ["wall time per verify, mean", ms(sum(reference.seconds) / cases.length), ms(sum(oursSeconds) / cases.length)],
  ["wall time per verify, median", ms(median(reference.seconds)), ms(median(oursSeconds))],
  ["CPU time per verify, mean", ms(sum(reference.cpuSeconds) / cases.length), ms(sum(oursCpuSeconds) / cases.length)],
  ["wall time, whole corpus", ms(sum(reference.seconds)), ms(sum(oursSeconds))],
];
const width = rows.map((r) => r.map((cell) => cell.length)).reduce((a, b) => a.map((w, k) => Math.max(w, b[k] as number)));
for (const r of rows) console.log(r.map((cell, k) => cell.padEnd(width[k] as number)).join("  "));
const both = cases.filter((_, k) => ours[k] === reference.verdicts[k]).length;
console.log(
  `\nedgegym and math-verify give the same verdict on ${both}/${cases.length}; edgegym is ${(sum(reference.seconds) / sum(oursSeconds)).toFixed(1)}x faster in wall time (mean), ${(median(reference.seconds) / median(oursSeconds)).toFixed(1)}x (median), ${(sum(reference.cpuSeconds) / sum(oursCpuSeconds)).toFixed(1)}x in CPU time (mean).`,
);
// issue-28-cases.json records math-verify's verdict per case; a different one from this run means the file is stale.
const stale = cases.filter((c, k) => c.mathVerify !== undefined && c.mathVerify !== reference.verdicts[k]).map((c) => `${c.source}: ${c.gold} vs ${c.pred}`);
if (stale.length > 0) console.log(`\nrecorded math-verify verdicts that this run of math-verify ${reference.version} does not give (${stale.length}):\n  ${stale.join("\n  ")}`);
console.log(`edgegym's listed misses: ${Object.keys(KNOWN_MISSES).length}. Machine: ${cpus()[0]?.model ?? "?"} x${cpus().length}, load average ${loadavg().map((l) => l.toFixed(1)).join(" ")}, Node ${process.version}.`);
