/**
 * Similarity of two strings by longest common subsequence: 2·LCS / (|a| + |b|), in
 * [0, 1]; 1 when equal (two empty strings count as equal). Code points, not UTF-16
 * units, so an emoji reversed is one character. O(|a|·|b|) time, O(|b|) memory.
 */
export function lcsRatio(a: string, b: string): number {
  const x = Array.from(a);
  const y = Array.from(b);
  if (x.length + y.length === 0) return 1;
  let prev = new Uint32Array(y.length + 1);
  let curr = new Uint32Array(y.length + 1);
  for (let i = 1; i <= x.length; i++) {
    for (let j = 1; j <= y.length; j++) {
      curr[j] = x[i - 1] === y[j - 1] ? (prev[j - 1] as number) + 1 : Math.max(prev[j] as number, curr[j - 1] as number);
    }
    [prev, curr] = [curr, prev];
  }
  return (2 * (prev[y.length] as number)) / (x.length + y.length);
}
