// Start-up cost of the python sandbox (not a test): isolation probe, snapshot, a job on a
// cold-loaded process, a job on a process started from the snapshot, and a job on a
// pre-warmed spare. Medians of N runs. Usage: npx tsx bench/python-sandbox.ts [N]
import { PyodideSandbox } from "../src/envs/builtin/python/sandbox.node.js";

const n = Number(process.argv[2] ?? 7);
const job = { replay: ["import math\nxs = [math.factorial(i) for i in range(50)]"], code: "len(xs)", seed: 1, timeoutMs: 10_000, outputCap: 100 };
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function time(sandbox: PyodideSandbox, gapMs: number): Promise<number> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    if (gapMs) await sleep(gapMs); // the model "thinking" between calls: a spare gets loaded meanwhile
    const t = performance.now();
    const r = await sandbox.run(job);
    if (r.status !== "ok") throw new Error(JSON.stringify(r));
    out.push(performance.now() - t);
  }
  return median(out);
}

const probe = new PyodideSandbox({ spares: 0 });
let t = performance.now();
const report = probe.isolation();
console.log(`isolation: ${report.level} (${report.detail}); probe ${Math.round(performance.now() - t)} ms`);
t = performance.now();
await (probe as unknown as { memorySnapshot(): Promise<Uint8Array> }).memorySnapshot();
console.log(`snapshot made in ${Math.round(performance.now() - t)} ms`);
console.log(`job on a process started from the snapshot (no spare): median ${Math.round(await time(probe, 0))} ms`);
await probe.close();

const cold = new PyodideSandbox({ spares: 0 });
(cold as unknown as { snapshot: Promise<Uint8Array> }).snapshot = Promise.resolve(new Uint8Array()); // force cold loads
console.log(`job on a cold-loaded process (no snapshot, no spare): median ${Math.round(await time(cold, 0))} ms`);
await cold.close();

const pooled = new PyodideSandbox({ spares: 1 });
await pooled.warm();
console.log(`job on a pre-warmed spare (1 s between calls): median ${Math.round(await time(pooled, 1_000))} ms`);
await pooled.close();
