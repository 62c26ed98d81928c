import type { EvalSummary } from "../../protocol/index.js";
import type { SeatSummary } from "../seats.js";

const n3 = (v: number): string => (Number.isFinite(v) ? v.toFixed(3) : "–");
/**
 * One unit for the whole timing block (it used to switch to seconds per cell, so "12.3s" sat
 * beside "950" in one column): seconds once the slowest total reaches 10 s, else milliseconds.
 */
export function timingUnit(maxMs: number): { label: "ms" | "s"; format: (ms: number) => string } {
  if (maxMs >= 10_000) return { label: "s", format: (v) => (v / 1000).toFixed(v < 100_000 ? 2 : 1) };
  return { label: "ms", format: (v) => (v < 10 ? v.toFixed(1) : String(Math.round(v))) };
}
const int = (v: number): string => Math.round(v).toLocaleString("en-US");

/** A text histogram: one row per bin, bars scaled to the fullest bin. */
export function histogramLines(bins: EvalSummary["histogram"], width = 30): string[] {
  const top = Math.max(1, ...bins.map((b) => b.count));
  return bins.map((b) => {
    const cells = (b.count / top) * width;
    const full = Math.floor(cells);
    const bar = "█".repeat(full) + (cells - full >= 0.5 ? "▌" : "");
    return `  ${n3(b.lo).padStart(7)} – ${n3(b.hi).padEnd(7)} ${bar.padEnd(width + 1)} ${b.count}`;
  });
}

export interface ReportHeader {
  envId: string;
  model: string;
  numExamples: number;
  rolloutsPerExample: number;
  driver: string;
  runDir?: string | undefined;
  /** A seated environment's: who played each seat, and each seat's figures. */
  seats?: Record<string, string> | null | undefined;
  seatSummaries?: Record<string, SeatSummary> | null | undefined;
}

const OUTCOMES = new Set(["win", "draw", "loss"]);

/**
 * The per-seat table of a seated run: each seat's player (the model is `client`), its
 * reward, and for a game its wins, draws and losses; its other figures on the same line.
 */
export function seatLines(seats: Record<string, string> | null | undefined, summaries: Record<string, SeatSummary> | null | undefined): string[] {
  if (!seats && !summaries) return [];
  const names = [...new Set([...Object.keys(seats ?? {}), ...Object.keys(summaries ?? {})])];
  const player = (seat: string): string => {
    const p = seats?.[seat] ?? summaries?.[seat]?.player ?? "?";
    return p === "client" ? "model" : p;
  };
  const games = names.some((n) => summaries?.[n]?.wins !== undefined);
  const sw = Math.max(4, ...names.map((n) => n.length));
  const pw = Math.max(6, ...names.map((n) => player(n).length));
  const out = [`seats        ${"seat".padEnd(sw)}  ${"player".padEnd(pw)}  ${"reward".padStart(6)}  ${"std".padStart(6)}${games ? `  ${"wins".padStart(5)}  ${"draws".padStart(5)}  ${"losses".padStart(6)}` : ""}  rollouts`];
  for (const seat of names) {
    const s = summaries?.[seat];
    const cells = `  ${(s ? n3(s.reward.mean) : "–").padStart(6)}  ${(s ? n3(s.reward.std) : "–").padStart(6)}`;
    const outcome = games ? `  ${String(s?.wins ?? "–").padStart(5)}  ${String(s?.draws ?? "–").padStart(5)}  ${String(s?.losses ?? "–").padStart(6)}` : "";
    const components = new Set(s?.components.map((c) => c.name) ?? []);
    const rest = Object.entries(s?.metrics ?? {}).filter(([k]) => !OUTCOMES.has(k) && !components.has(k));
    out.push(`             ${seat.padEnd(sw)}  ${player(seat).padEnd(pw)}${cells}${outcome}  ${String(s?.rollouts ?? 0).padStart(8)}${rest.length ? `   ${rest.map(([k, v]) => `${k} ${n3(v)}`).join(" · ")}` : ""}`);
  }
  return out;
}

/** The closing summary printed after a run: every figure the summary holds, in a screenful. */
export function formatReport(summary: EvalSummary, header: ReportHeader): string {
  const out: string[] = [];
  const s = summary;
  out.push(`${header.envId} · ${header.model} · ${s.rollouts} rollouts (${header.numExamples} examples × ${header.rolloutsPerExample}) · ${header.driver} · ${(s.wall_ms / 1000).toFixed(1)} s`);
  out.push(`reward       mean ${n3(s.reward.mean)}  std ${n3(s.reward.std)}  min ${n3(s.reward.min)}  max ${n3(s.reward.max)}`);
  const width = Math.max(10, ...s.components.map((c) => c.name.length));
  for (const c of s.components) out.push(`  ${c.name.padEnd(width)} mean ${n3(c.mean)}  (weight ${c.weight})`);
  out.push(...seatLines(header.seats, header.seatSummaries));
  const extra = Object.entries(s.metrics).filter(([name]) => !s.components.some((c) => c.name === name));
  if (extra.length) out.push(`metrics      ${extra.map(([k, v]) => `${k} ${n3(v)}`).join(" · ")}`);
  const passK = Object.entries(s.pass_at_k);
  if (passK.length) {
    out.push(`pass@k       ${passK.map(([k, v]) => `pass@${k} ${n3(v)}`).join("  ")}   (reward ≥ ${s.pass_threshold})`);
    out.push(`pass^k       ${Object.entries(s.pass_all_k).map(([k, v]) => `pass^${k} ${n3(v)}`).join("  ")}`);
  }
  out.push(`stop reasons ${Object.entries(s.stop_conditions).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}`).join(" · ")}${s.model_length_stops ? ` · model hit max tokens in ${s.model_length_stops}` : ""}`);
  const byCode = Object.entries(s.errors_by_code).map(([k, v]) => `${k} ${v}`).join(", ");
  out.push(`errors       ${s.errors}/${s.rollouts} (${(s.error_rate * 100).toFixed(1)}%)${byCode ? `  ${byCode}` : ""}`);
  out.push(`tokens       input ${int(s.usage.input_tokens)} (${int(s.usage.mean_input_tokens)}/rollout) · output ${int(s.usage.output_tokens)} (${int(s.usage.mean_output_tokens)}/rollout)`);
  const t = s.timing;
  const rows = [["generation", t.generation_ms], ["environment", t.env_ms], ["scoring", t.scoring_ms], ["total", t.total_ms]] as const;
  const unit = timingUnit(Math.max(...rows.map(([, spread]) => spread.max)));
  out.push(`timing (${unit.label})`.padEnd(13) + "min / mean / max");
  for (const [name, spread] of rows) out.push(`  ${name.padEnd(11)} ${unit.format(spread.min)} / ${unit.format(spread.mean)} / ${unit.format(spread.max)}`);
  out.push(`rate         ${s.rollouts_per_second.toFixed(2)} rollouts/s`);
  if (s.histogram.length) {
    out.push("reward histogram");
    out.push(...histogramLines(s.histogram));
  }
  if (header.runDir) out.push(`saved        ${header.runDir}`);
  return out.join("\n");
}
