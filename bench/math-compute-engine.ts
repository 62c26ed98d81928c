/**
 * The evaluation behind docs/math-verifier.md's choice of parser: @cortex-js/compute-engine
 * (LaTeX → MathJSON, symbolic and numeric comparison) against edgegym's own path
 * (LaTeX → plain text → mathjs, with exact rationals), on the same corpus as
 * `npm run bench:math`, with the same answer extraction in front of both (compute-engine
 * has none), so only the parsing and comparison differ. Prints agreement, false positives,
 * µs per verify in wall and CPU time (after a warm-up of 20 cases, one run), and compute-engine's gzip size
 * bundled alone (what it would add to the Worker: the ComputeEngine class pulls in all of it).
 *
 * compute-engine is not a dependency; install it somewhere and point at it:
 *   npm i --prefix /tmp/ce @cortex-js/compute-engine@0.140.0
 *   COMPUTE_ENGINE_DIR=/tmp/ce/node_modules/@cortex-js/compute-engine npx tsx bench/math-compute-engine.ts
 */
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { answerReadings, type ExtractionTarget } from "../src/envs/math/extract.js";
import { verifyMath } from "../src/envs/math/verify.js";

interface Case {
  gold: string;
  pred: string;
  expected: boolean;
  targets: ExtractionTarget[];
  precision: number;
  strict: boolean;
  allowSetRelationComp: boolean;
}
interface BoxedExpression {
  isValid: boolean;
  isEqual(other: BoxedExpression): boolean | undefined;
  isSame(other: BoxedExpression): boolean;
}
interface Engine {
  parse(latex: string): BoxedExpression;
}

const dir = process.env.COMPUTE_ENGINE_DIR;
if (!dir) {
  console.error("set COMPUTE_ENGINE_DIR to an installed @cortex-js/compute-engine (see the comment at the top)");
  process.exit(1);
}
const entry = resolve(dir, "dist/esm-min/compute-engine.js");
const version = (JSON.parse(readFileSync(resolve(dir, "package.json"), "utf8")) as { version: string }).version;
const { ComputeEngine } = (await import(pathToFileURL(entry).href)) as { ComputeEngine: new () => Engine };
const ce = new ComputeEngine();

const root = resolve(import.meta.dirname, "..");
const cases = ["src/envs/math/math-verify-cases.json", "src/envs/math/issue-13-cases.json"].flatMap(
  (f) => (JSON.parse(readFileSync(resolve(root, f), "utf8")) as { cases: Case[] }).cases,
);

/** The first extracted reading compute-engine parses without error (as verifyMath keeps the first that reads as math). */
function pick(text: string, targets: ExtractionTarget[]): BoxedExpression | null {
  const readings = answerReadings(text, targets);
  for (const r of readings) {
    const parsed = ce.parse(r.text);
    if (parsed.isValid) return parsed;
  }
  return readings[0] ? ce.parse(readings[0].text) : null;
}
function viaComputeEngine(c: Case): boolean {
  const g = pick(c.gold, c.targets);
  const p = pick(c.pred, c.targets);
  return g !== null && p !== null && (g.isEqual(p) === true || g.isSame(p));
}
const viaEdgegym = (c: Case): boolean =>
  verifyMath(c.gold, c.pred, { precision: c.precision, targets: c.targets, allowSetRelationComparison: c.allowSetRelationComp, strict: c.strict }).equal;

for (const [name, verify] of [[`compute-engine ${version}`, viaComputeEngine], ["edgegym", viaEdgegym]] as const) {
  const safe = (c: Case): boolean => {
    try {
      return verify(c);
    } catch {
      return false;
    }
  };
  cases.slice(0, 20).forEach(safe);
  let agree = 0;
  let falsePositives = 0;
  const cpuStart = process.cpuUsage();
  const start = performance.now();
  for (const c of cases) {
    const got = safe(c);
    if (got === c.expected) agree++;
    else if (got) falsePositives++;
  }
  const us = ((performance.now() - start) * 1000) / cases.length;
  const cpu = process.cpuUsage(cpuStart);
  const cpuUs = (cpu.user + cpu.system) / cases.length;
  console.log(`${name}: agrees with ${agree}/${cases.length} expected verdicts, ${falsePositives} false positives, ${us.toFixed(0)} µs wall and ${cpuUs.toFixed(0)} µs CPU per verify`);
}

const tmp = mkdtempSync(join(tmpdir(), "edgegym-ce-size-"));
try {
  const file = join(tmp, "entry.js");
  writeFileSync(file, `import { ComputeEngine } from ${JSON.stringify(entry)};\nconst ce = new ComputeEngine();\nexport const same = (a, b) => ce.parse(a).isEqual(ce.parse(b));\n`);
  const out = await build({ entryPoints: [file], bundle: true, minify: true, format: "esm", platform: "neutral", write: false, logLevel: "silent" });
  const code = out.outputFiles[0]?.contents ?? new Uint8Array();
  console.log(`compute-engine bundled alone (esbuild, minified): ${(code.length / 1024).toFixed(1)} KiB raw, ${(gzipSync(code).length / 1024).toFixed(1)} KiB gzip`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
