// `npm run size:worker`: the Worker bundle's size, raw and gzipped, against the free plan's limit.
import { rmSync } from "node:fs";
import { dirname } from "node:path";
import { buildWorkerBundle, FREE_PLAN_GZIP_LIMIT_BYTES } from "./worker-bundle.js";

const kib = (n: number): string => `${(n / 1024).toFixed(1)} KiB`;

const bundle = await buildWorkerBundle();
rmSync(dirname(bundle.file), { recursive: true, force: true });

// By what is left of each package after tree-shaking: esbuild reads many modules it then drops
// (most of mathjs), so their size before bundling says little about the bundle.
const byPackage = new Map<string, number>();
const kept = bundle.inputs.filter((i) => i.bytesInOutput > 0);
for (const { path, bytesInOutput } of kept) {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1] ?? "edgegym (src/)";
  byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + bytesInOutput);
}
const share = ((bundle.gzipBytes / FREE_PLAN_GZIP_LIMIT_BYTES) * 100).toFixed(1);
console.log("Worker bundle (wrangler deploy --dry-run)");
console.log(`  raw:  ${kib(bundle.rawBytes)} (${bundle.rawBytes} bytes)`);
console.log(`  gzip: ${kib(bundle.gzipBytes)} (${bundle.gzipBytes} bytes) = ${share}% of the free plan's ${kib(FREE_PLAN_GZIP_LIMIT_BYTES)}`);
console.log(`  ${kept.length} of the ${bundle.inputs.length} modules read are in it; bytes in the bundle (raw), by package:`);
for (const [pkg, bytes] of [...byPackage].sort((a, b) => b[1] - a[1])) console.log(`    ${kib(bytes).padStart(10)}  ${pkg}`);
if (bundle.gzipBytes > FREE_PLAN_GZIP_LIMIT_BYTES) {
  console.error("over the free plan's Worker size limit");
  process.exitCode = 1;
}
