import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

/**
 * Cloudflare's Worker size limit on the free plan, measured after gzip. The limits page
 * has read 3 MB (free) and 10 MB (paid) since late 2024 and 64 MiB for all plans more
 * recently (developers.cloudflare.com/workers/platform/limits); the smaller figure is
 * the budget kept here.
 */
export const FREE_PLAN_GZIP_LIMIT_BYTES = 3 * 1024 * 1024;

export interface WorkerBundle {
  /** The bundled Worker, as wrangler would upload it. */
  file: string;
  code: string;
  rawBytes: number;
  gzipBytes: number;
  /**
   * Every source file esbuild read (paths relative to the working directory), its size
   * before bundling and how many bytes of it are left in the bundle after tree-shaking
   * (0 for a module read and dropped whole).
   */
  inputs: { path: string; bytes: number; bytesInOutput: number }[];
  /** Modules the bundle still imports at run time (must be none but `cloudflare:*`). */
  externalImports: string[];
}

interface Metafile {
  inputs: Record<string, { bytes: number }>;
  outputs: Record<string, { imports: { path: string }[]; inputs: Record<string, { bytesInOutput: number }> }>;
}

/** Builds the Worker exactly as `wrangler deploy` would, without uploading (`--dry-run --outdir`). */
export async function buildWorkerBundle(outdir = mkdtempSync(join(tmpdir(), "edgegym-worker-bundle-"))): Promise<WorkerBundle> {
  const wrangler = join(process.cwd(), "node_modules", "wrangler", "bin", "wrangler.js");
  const args = [wrangler, "deploy", "--dry-run", "--outdir", outdir, "--metafile", join(outdir, "meta.json")];
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, args, { env: { ...process.env, WRANGLER_SEND_METRICS: "false" }, stdio: ["ignore", "pipe", "pipe"] });
    let text = "";
    child.stdout.on("data", (d: Buffer) => (text += d.toString()));
    child.stderr.on("data", (d: Buffer) => (text += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(text) : reject(new Error(`wrangler deploy --dry-run exited with ${code}:\n${text}`))));
  });
  const file = join(outdir, "index.js");
  const code = readFileSync(file, "utf8");
  const meta = JSON.parse(readFileSync(join(outdir, "meta.json"), "utf8")) as Metafile;
  if (!output.includes("--dry-run: exiting now")) throw new Error(`unexpected wrangler output:\n${output}`);
  return {
    file,
    code,
    rawBytes: Buffer.byteLength(code),
    // zlib's default level: the figure wrangler prints as "gzip" on upload.
    gzipBytes: gzipSync(code).length,
    inputs: Object.entries(meta.inputs).map(([path, { bytes }]) => ({
      path,
      bytes,
      bytesInOutput: Object.values(meta.outputs).reduce((sum, o) => sum + (o.inputs[path]?.bytesInOutput ?? 0), 0),
    })),
    externalImports: Object.values(meta.outputs).flatMap((o) => o.imports.map((i) => i.path)),
  };
}

/**
 * Module specifiers in bundled code that only Node provides: `node:*`, Node's builtins
 * by bare name, and better-sqlite3. A second look beside esbuild's metafile, in case a
 * specifier reaches the output as text (a `require("fs")` left for run time).
 */
/**
 * True when the position sits inside a quoted string on its line (an error message that
 * mentions `import('node:buffer')`, as openai's does, is text, not an import). A rough
 * reading of the line, enough for bundler output, where statements are not split.
 */
function insideStringLiteral(code: string, index: number): boolean {
  const lineStart = code.lastIndexOf("\n", index) + 1;
  let quote: string | null = null;
  for (let i = lineStart; i < index; i++) {
    const ch = code[i] as string;
    if (quote) {
      if (ch === "\\") i++;
      else if (ch === quote) quote = null;
    } else if (ch === '"' || ch === "'" || ch === "`") quote = ch;
  }
  return quote !== null;
}

export function nodeOnlySpecifiers(code: string): string[] {
  const builtins = new Set(["fs", "path", "os", "child_process", "crypto", "net", "http", "https", "zlib", "stream", "worker_threads", "module", "url", "util", "buffer", "events", "async_hooks"]);
  const found = new Set<string>();
  const patterns = [
    /\b(?:import|export)\s*(?:[\w$*{}\s,]+?\s*from\s*)?["']([^"'\n]+)["']/g,
    /\bimport\s*\(\s*["']([^"'\n]+)["']\s*\)/g,
    /\brequire\s*\(\s*["']([^"'\n]+)["']\s*\)/g,
  ];
  for (const pattern of patterns) {
    for (const m of code.matchAll(pattern)) {
      if (insideStringLiteral(code, m.index)) continue;
      const spec = m[1] ?? "";
      if (spec.startsWith("node:") || builtins.has(spec) || spec === "better-sqlite3" || spec.startsWith("better-sqlite3/")) found.add(spec);
    }
  }
  return [...found].sort();
}

/** Bundled source files that belong to the Node build only. */
export function nodeOnlyInputs(inputs: readonly { path: string }[]): string[] {
  return inputs.map((i) => i.path).filter((p) => /node_modules\/better-sqlite3\/|drizzle-orm\/better-sqlite3\/|src\/server\/node\/|src\/server\/db\/node-sqlite/.test(p));
}
