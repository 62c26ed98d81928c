import { existsSync, statSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { selectForSft, type ResultRowLike, type SftReport, type SftRow } from "../sft.js";
import { isVf04Episode } from "../vf-formats.js";
import { detectRunFormat, readResults, readRunRollouts, rolloutsFile } from "./run-dir.js";
import { sftParquet } from "./sft-parquet.js";

export const EXPORT_SFT_USAGE = `edgegym export-sft RESULTS — turn evaluation rollouts into SFT data

RESULTS is a run directory, or the results.jsonl (verifiers 0.3 / edgegym) or
traces.jsonl (verifiers 0.4) in it; runs made by either vf-eval are read too.
  --min-reward X          keep rollouts with reward ≥ X (required)
  --best-per-example      keep only the best rollout of each row
  --format jsonl|parquet  jsonl (default): one {"messages": [...]} per line, the
                          conversational shape TRL's SFTTrainer reads; parquet: the
                          same column, readable by Hugging Face datasets and pyarrow
  -o, --output FILE       default: sft.jsonl / sft.parquet beside the results
  -h, --help
Failed rollouts are never exported.`;

export interface ExportSftOptions {
  results: string;
  minReward: number;
  bestPerExample: boolean;
  format: "jsonl" | "parquet";
  output?: string | undefined;
}

export function resultsPath(input: string): string {
  if (existsSync(input) && statSync(input).isDirectory()) return join(input, rolloutsFile(detectRunFormat(input) ?? "vf03"));
  return input;
}

/**
 * Selects and writes the SFT rows. When nothing is selected nothing is written (an empty
 * file would look like a result) and `output` is null; `bestReward` then says how far off
 * the threshold was.
 */
export async function exportSft(opts: ExportSftOptions): Promise<{ output: string | null; report: SftReport; rows: SftRow[]; bestReward: number | null }> {
  const source = resultsPath(opts.results);
  if (!existsSync(source)) throw new Error(`no results file at ${source}`);
  // verifiers 0.4 episodes become rows first; results.jsonl rows (edgegym's, vf-eval 0.3's) are read as they are.
  const { rows: raw } = await readResults<unknown>(source);
  const input: ResultRowLike[] = raw.some(isVf04Episode) ? (await readRunRollouts(source)).rows : (raw as ResultRowLike[]);
  const { rows, report } = selectForSft(input, { minReward: opts.minReward, bestPerExample: opts.bestPerExample });
  const rewards = input.filter((r) => !r.error && typeof r.reward === "number" && Number.isFinite(r.reward)).map((r) => r.reward as number);
  const bestReward = rewards.length ? Math.max(...rewards) : null;
  if (rows.length === 0) return { output: null, report, rows, bestReward };
  const output = opts.output ?? join(dirname(source), opts.format === "parquet" ? "sft.parquet" : "sft.jsonl");
  await mkdir(dirname(output), { recursive: true });
  if (opts.format === "parquet") await writeFile(output, sftParquet(rows));
  else await writeFile(output, rows.map((r) => `${JSON.stringify(r)}\n`).join(""));
  return { output, report, rows, bestReward };
}

export async function exportSftCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      "min-reward": { type: "string" },
      "best-per-example": { type: "boolean" },
      format: { type: "string" },
      output: { type: "string", short: "o" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(EXPORT_SFT_USAGE);
    return 0;
  }
  if (positionals.length !== 1) throw new Error("give one results.jsonl file or run directory; see edgegym export-sft --help");
  if (values["min-reward"] === undefined) throw new Error("--min-reward is required (e.g. --min-reward 0.9)");
  const minReward = Number(values["min-reward"]);
  if (!Number.isFinite(minReward)) throw new Error(`--min-reward must be a number, got "${values["min-reward"]}"`);
  const format = values.format ?? "jsonl";
  if (format !== "jsonl" && format !== "parquet") throw new Error(`--format must be jsonl or parquet, got "${format}"`);
  const { output, report, bestReward } = await exportSft({
    results: positionals[0] as string,
    minReward,
    bestPerExample: values["best-per-example"] ?? false,
    format,
    output: values.output,
  });
  const leftOut = `${report.failed} failed, ${report.belowMinReward} below ${minReward}${values["best-per-example"] ? `, ${report.notBestOfExample} not the best of their row` : ""}`;
  if (output === null) {
    const best = bestReward === null ? "no rollout finished without an error" : `the best reward was ${bestReward}`;
    console.error(`edgegym export-sft: no rollout selected, nothing written (read ${report.read}; left out: ${leftOut}); ${best}`);
    return 1;
  }
  console.log(
    `wrote ${report.kept} conversations to ${output} (read ${report.read}; left out: ${leftOut})`,
  );
  return 0;
}
