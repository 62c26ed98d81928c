import type { EvalRollout, EvalSummary } from "../protocol/index.js";

class Spread {
  min = Infinity;
  max = -Infinity;
  sum = 0;
  n = 0;
  add(v: number): void {
    this.min = Math.min(this.min, v);
    this.max = Math.max(this.max, v);
    this.sum += v;
    this.n++;
  }
  get(): { min: number; mean: number; max: number } {
    return this.n ? { min: this.min, mean: this.sum / this.n, max: this.max } : { min: 0, mean: 0, max: 0 };
  }
}

/** k = 1, 2, 4, … up to n: the values verifiers reports pass@k for. */
export function passKValues(n: number): number[] {
  const out: number[] = [];
  for (let k = 1; k <= n; k *= 2) out.push(k);
  return out;
}

/**
 * Unbiased pass@k (at least one of k samples passes) and pass^k (all k pass) for a row
 * with n samples of which c pass: 1 − C(n−c, k)/C(n, k) and C(c, k)/C(n, k), computed as
 * running products so large n never overflows.
 */
export function passAtK(n: number, c: number, k: number): { atK: number; allK: number } {
  let noneFail = 1; // C(n-c, k) / C(n, k)
  let allPass = 1; // C(c, k) / C(n, k)
  for (let i = 0; i < k; i++) {
    noneFail *= Math.max(0, n - c - i) / (n - i);
    allPass *= Math.max(0, c - i) / (n - i);
  }
  return { atK: 1 - noneFail, allK: allPass };
}

/** Ten equal bins from the lowest to the highest reward (one bin when they are equal). */
export function histogram(values: readonly number[], bins = 10): EvalSummary["histogram"] {
  if (values.length === 0) return [];
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values) {
    lo = Math.min(lo, v);
    hi = Math.max(hi, v);
  }
  if (hi - lo < 1e-12) return [{ lo, hi, count: values.length }];
  const width = (hi - lo) / bins;
  const out = Array.from({ length: bins }, (_, i) => ({ lo: lo + i * width, hi: i === bins - 1 ? hi : lo + (i + 1) * width, count: 0 }));
  for (const v of values) (out[Math.min(bins - 1, Math.floor((v - lo) / width))] as { count: number }).count++;
  return out;
}

/**
 * Aggregates rollouts as they finish, so the progress line and the closing summary
 * cost O(1) per rollout. Rewards are kept (one number each) for pass@k and the histogram.
 */
export class SummaryBuilder {
  private rollouts = 0;
  private errors = 0;
  private readonly errorsByCode = new Map<string, number>();
  private readonly rewards: number[] = [];
  private readonly rewardSpread = new Spread();
  private readonly byExample = new Map<number, number[]>();
  private readonly components = new Map<string, { weight: number; sum: number; n: number }>();
  private readonly metrics = new Map<string, { sum: number; n: number }>();
  private readonly stops = new Map<string, number>();
  private lengthStops = 0;
  private inputTokens = 0;
  private outputTokens = 0;
  private readonly timing = { generation_ms: new Spread(), env_ms: new Spread(), scoring_ms: new Spread(), total_ms: new Spread() };

  constructor(
    private readonly passThreshold: number,
    private readonly rolloutsPerExample: number,
  ) {}

  add(row: EvalRollout): void {
    this.rollouts++;
    this.rewards.push(row.reward);
    this.rewardSpread.add(row.reward);
    const group = this.byExample.get(row.example_id) ?? [];
    group.push(row.reward);
    this.byExample.set(row.example_id, group);
    if (row.error) {
      this.errors++;
      this.errorsByCode.set(row.error.error, (this.errorsByCode.get(row.error.error) ?? 0) + 1);
    }
    for (const c of row.components) {
      const acc = this.components.get(c.name) ?? { weight: c.weight, sum: 0, n: 0 };
      acc.sum += c.score;
      acc.n++;
      this.components.set(c.name, acc);
    }
    for (const [name, value] of Object.entries(row.metrics)) {
      const acc = this.metrics.get(name) ?? { sum: 0, n: 0 };
      acc.sum += value;
      acc.n++;
      this.metrics.set(name, acc);
    }
    const stop = row.error ? "error" : (row.stop_condition ?? "unknown");
    this.stops.set(stop, (this.stops.get(stop) ?? 0) + 1);
    if (row.finish_reasons.includes("length")) this.lengthStops++;
    this.inputTokens += row.token_usage.input_tokens;
    this.outputTokens += row.token_usage.output_tokens;
    this.timing.generation_ms.add(row.timing.generation_ms);
    this.timing.env_ms.add(row.timing.env_ms);
    this.timing.scoring_ms.add(row.timing.scoring_ms);
    this.timing.total_ms.add(row.timing.total_ms);
  }

  get count(): number {
    return this.rollouts;
  }

  get errorCount(): number {
    return this.errors;
  }

  get meanReward(): number | null {
    return this.rollouts ? this.rewardSpread.sum / this.rollouts : null;
  }

  private passK(): { atK: Record<string, number>; allK: Record<string, number> } {
    const atK: Record<string, number> = {};
    const allK: Record<string, number> = {};
    if (this.rolloutsPerExample <= 1) return { atK, allK };
    for (const k of passKValues(this.rolloutsPerExample)) {
      let sumAt = 0;
      let sumAll = 0;
      let groups = 0;
      for (const rewards of this.byExample.values()) {
        if (rewards.length < k) continue;
        const { atK: a, allK: b } = passAtK(rewards.length, rewards.filter((r) => r >= this.passThreshold).length, k);
        sumAt += a;
        sumAll += b;
        groups++;
      }
      if (groups) {
        atK[String(k)] = sumAt / groups;
        allK[String(k)] = sumAll / groups;
      }
    }
    return { atK, allK };
  }

  build(wallMs: number): EvalSummary {
    const n = this.rollouts;
    const mean = this.meanReward ?? 0;
    const variance = n ? this.rewards.reduce((a, r) => a + (r - mean) ** 2, 0) / n : 0;
    const { atK, allK } = this.passK();
    return {
      rollouts: n,
      errors: this.errors,
      error_rate: n ? this.errors / n : 0,
      errors_by_code: Object.fromEntries(this.errorsByCode),
      reward: { mean, std: Math.sqrt(variance), min: this.rewardSpread.get().min, max: this.rewardSpread.get().max },
      components: [...this.components].map(([name, c]) => ({ name, weight: c.weight, mean: c.sum / c.n })),
      metrics: Object.fromEntries([...this.metrics].map(([name, m]) => [name, m.sum / m.n])),
      pass_threshold: this.passThreshold,
      pass_at_k: atK,
      pass_all_k: allK,
      stop_conditions: Object.fromEntries(this.stops),
      model_length_stops: this.lengthStops,
      usage: {
        input_tokens: this.inputTokens,
        output_tokens: this.outputTokens,
        mean_input_tokens: n ? this.inputTokens / n : 0,
        mean_output_tokens: n ? this.outputTokens / n : 0,
      },
      timing: {
        generation_ms: this.timing.generation_ms.get(),
        env_ms: this.timing.env_ms.get(),
        scoring_ms: this.timing.scoring_ms.get(),
        total_ms: this.timing.total_ms.get(),
      },
      histogram: histogram(this.rewards),
      wall_ms: wallMs,
      rollouts_per_second: wallMs > 0 ? n / (wallMs / 1000) : 0,
    };
  }
}
