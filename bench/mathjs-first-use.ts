/**
 * `npm run bench:mathjs`: what the first math answer or calculator call costs in a fresh
 * process, the way a new Worker isolate pays it. The equivalence checker and the
 * calculator are bundled into one ESM file with esbuild (as wrangler bundles the Worker),
 * then each scenario runs in RUNS fresh Node processes that time:
 *   - load: importing the bundle (parsing and running its top-level code, mathjs's included);
 *   - first: the first call (building the mathjs instances and doing the work), wall
 *     time and the process's CPU time (what a Worker's CPU limit counts; less disturbed
 *     by other work on a busy machine, though V8's helper threads count in it too);
 *   - second: the same call again, warm.
 * Medians are printed, with the bundle's size.
 *
 *   BENCH_RUNS=5 npm run bench:mathjs
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const root = resolve(import.meta.dirname, "..");
const dir = mkdtempSync(join(tmpdir(), "edgegym-mathjs-bench-"));

try {
  const entry = join(dir, "entry.ts");
  writeFileSync(
    entry,
    [
      // As the Worker entry does: mathjs's factories from static imports (Node would require them).
      `import { useBundledMathjs } from ${JSON.stringify(join(root, "src/envs/math/mathjs-bundled.ts"))};`,
      "useBundledMathjs();",
      `export { checkEquivalence } from ${JSON.stringify(join(root, "src/envs/math/equivalence.ts"))};`,
      `export { calculate } from ${JSON.stringify(join(root, "src/envs/builtin/tool-math/calculator.ts"))};`,
    ].join("\n"),
  );
  const bundle = join(dir, "bundle.mjs");
  // The resolution wrangler uses for a Worker (workerd/worker/browser conditions), emitted as one ESM file.
  await build({ entryPoints: [entry], bundle: true, format: "esm", platform: "neutral", conditions: ["workerd", "worker", "browser"], mainFields: ["browser", "module", "main"], outfile: bundle, logLevel: "error" });
  const code = readFileSync(bundle);

  const scenarios: Record<string, string> = {
    "check one pair (\\frac{\\sqrt{3}}{2} vs sqrt(3)/2)": `m.checkEquivalence("\\\\frac{\\\\sqrt{3}}{2}", "sqrt(3)/2")`,
    "check one pair (2(x+1) vs 2x+2)": `m.checkEquivalence("2(x+1)", "2x+2")`,
    "calculator (29427 * 1550 - 744762) / 74": `m.calculate("(29427 * 1550 - 744762) / 74")`,
  };
  const driver = join(dir, "driver.mjs");
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

  console.log(`mathjs first use, ${RUNS} fresh processes per scenario (node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? "?"})`);
  console.log(`bundle of the checker + calculator: ${(code.length / 1024).toFixed(1)} KiB raw, ${(gzipSync(code).length / 1024).toFixed(1)} KiB gzip`);
  console.log("| scenario | load ms | first call ms | first call CPU ms | load + first ms | second call ms |");
  console.log("|---|---:|---:|---:|---:|---:|");
  for (const [name, call] of Object.entries(scenarios)) {
    writeFileSync(
      driver,
      [
        "const t0 = performance.now();",
        `const m = await import(${JSON.stringify(bundle)});`,
        "const t1 = performance.now();",
        "const cpu = process.cpuUsage();",
        `const r = ${call};`,
        "const cpuUsed = process.cpuUsage(cpu);",
        "const t2 = performance.now();",
        `${call};`,
        "const t3 = performance.now();",
        "console.log(JSON.stringify({ load: t1 - t0, first: t2 - t1, firstCpu: (cpuUsed.user + cpuUsed.system) / 1000, second: t3 - t2, r }));",
      ].join("\n"),
    );
    type Row = { load: number; first: number; firstCpu: number; second: number };
    const rows: Row[] = [];
    for (let k = 0; k < RUNS; k++) {
      const out = spawnSync(process.execPath, [driver], { encoding: "utf8" });
      if (out.status !== 0) throw new Error(`${name}: ${out.stderr}`);
      rows.push(JSON.parse(out.stdout) as Row);
    }
    const f = (xs: number[]): string => median(xs).toFixed(1);
    console.log(`| ${name} | ${f(rows.map((r) => r.load))} | ${f(rows.map((r) => r.first))} | ${f(rows.map((r) => r.firstCpu))} | ${f(rows.map((r) => r.load + r.first))} | ${f(rows.map((r) => r.second))} |`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
