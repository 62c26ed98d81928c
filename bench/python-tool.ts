/**
 * Figures for the python tool's sandbox: interpreter start, a call on a warm interpreter,
 * and the cost of replaying a session's earlier cells (the price of keeping sessions in
 * the stored state rather than in memory). Run: npx tsx bench/python-tool.ts
 */
import { PyodideSandbox } from "../src/envs/builtin/python/sandbox.node.js";

const sandbox = new PyodideSandbox();
const job = (code: string, replay: string[] = []) => ({ replay, code, seed: 1, timeoutMs: 10_000, outputCap: 4_000 });

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

const cold = await time(() => sandbox.run(job("1 + 1")));
console.log(`interpreter start + first call: ${cold.toFixed(0)} ms`);

// A typical cell: a small computation with a list and a print.
const cell = (i: number) => `v${i} = sum(k * k for k in range(1000))\nprint(v${i} % 97)`;
for (const cells of [0, 1, 5, 20, 50]) {
  const replay = Array.from({ length: cells }, (_, i) => cell(i));
  const times: number[] = [];
  for (let r = 0; r < 15; r++) times.push(await time(() => sandbox.run(job("x = 1\nx", replay))));
  console.log(`warm call, ${String(cells).padStart(2)} earlier cells replayed: median ${median(times).toFixed(1)} ms (15 runs)`);
}

const imports = Array.from({ length: 15 }, () => 0);
for (let r = 0; r < imports.length; r++) imports[r] = await time(() => sandbox.run(job("import fractions, decimal, itertools, collections\nfractions.Fraction(1, 3)")));
console.log(`warm call importing fractions/decimal/itertools/collections: median ${median(imports).toFixed(1)} ms`);

const stop = await time(() => sandbox.run({ ...job("while True:\n    pass"), timeoutMs: 1_000 }));
console.log(`runaway loop with a 1000 ms limit: stopped after ${stop.toFixed(0)} ms`);
const restart = await time(() => sandbox.run(job("1")));
console.log(`next call (new interpreter): ${restart.toFixed(0)} ms`);
await sandbox.close();
