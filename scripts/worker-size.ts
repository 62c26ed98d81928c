// `npm run size:worker`: the Worker bundle's size, raw and gzipped, against the free plan's limit.
import { rmSync } from "node:fs";
import { dirname } from "node:path";
import { buildWorkerBundle, FREE_PLAN_GZIP_LIMIT_BYTES } from "./worker-bundle.js";

const kib = (n: number): string => `${(n / 1024).toFixed(1)} KiB`;

const bundle = await buildWorkerBundle();
rmSync(dirname(bundle.file), { recursive: true, force: true });

const byPackage = new Map<string, number>();
for (const { path, bytes } of bundle.inputs) {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1] ?? "edgegym (src/)";
  byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + bytes);
}
const share = ((bundle.gzipBytes / FREE_PLAN_GZIP_LIMIT_BYTES) * 100).toFixed(1);
console.log("Worker bundle (wrangler deploy --dry-run)");
console.log(`  raw:  ${kib(bundle.rawBytes)} (${bundle.rawBytes} bytes)`);
console.log(`  gzip: ${kib(bundle.gzipBytes)} (${bundle.gzipBytes} bytes) = ${share}% of the free plan's ${kib(FREE_PLAN_GZIP_LIMIT_BYTES)}`);
console.log(`  ${bundle.inputs.length} modules; source bytes going in, by package:`);
for (const [pkg, bytes] of [...byPackage].sort((a, b) => b[1] - a[1])) console.log(`    ${kib(bytes).padStart(10)}  ${pkg}`);
if (bundle.gzipBytes > FREE_PLAN_GZIP_LIMIT_BYTES) {
  console.error("over the free plan's Worker size limit");
  process.exitCode = 1;
}
