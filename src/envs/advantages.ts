/**
 * GRPO advantages: each reward minus its group's mean, optionally divided by the
 * group's standard deviation (population std, as GRPO implementations use; a group
 * whose rewards are all equal gets advantage 0 rather than a division by zero).
 */
export function groupAdvantages(rewards: readonly number[], opts: { scale: boolean }): { mean: number; std: number; advantages: number[] } {
  const n = rewards.length;
  if (n === 0) return { mean: 0, std: 0, advantages: [] };
  const mean = rewards.reduce((a, b) => a + b, 0) / n;
  const std = Math.sqrt(rewards.reduce((a, r) => a + (r - mean) ** 2, 0) / n);
  const advantages = rewards.map((r) => {
    const centred = r - mean;
    if (!opts.scale) return centred;
    return std > 1e-12 ? centred / std : 0;
  });
  return { mean, std, advantages };
}
