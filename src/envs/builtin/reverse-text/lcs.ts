import { codePointsWithin } from "../../answer-limits.js";

/**
 * Longest strings lcsRatio compares, in code points. The longest reference paragraph is
 * under 300 characters; past 17 times that the input is not an attempt at the task, and
 * one comparison (still n·m/32 word steps, bit-parallel) stays about 2 ms, so a 1 MB
 * batch of items at the cap never holds the event loop long between items.
 */
export const LCS_MAX_CHARS = 5_000;

function popcount32(v: number): number {
  v -= (v >>> 1) & 0x55555555;
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/**
 * Length of the longest common subsequence of two code-point arrays, bit-parallel
 * (the idea of Allison & Dix 1986, in the form Hyyrö 2004 gives it): one bit per
 * position of the shorter array `y`, a row of the DP table in ⌈|y|/32⌉ words, and each
 * character of `x` advances the whole row with one multi-word add. A zero bit marks a
 * position where the LCS grew, so the answer is the count of zero bits. O(|x|·|y|/32)
 * time, O(σ·|y|/32) memory for σ characters common to both.
 */
export function lcsLength(a: readonly string[], b: readonly string[]): number {
  const [x, y] = a.length >= b.length ? [a, b] : [b, a];
  const m = y.length;
  if (m === 0) return 0;
  const words = Math.ceil(m / 32);
  // Match masks only for characters of y: any other character of x leaves the row as is.
  const slot = new Map<string, number>();
  for (const ch of y) if (!slot.has(ch)) slot.set(ch, slot.size);
  const masks = new Uint32Array(slot.size * words);
  y.forEach((ch, j) => {
    const at = (slot.get(ch) as number) * words + (j >>> 5);
    masks[at] = (masks[at] as number) | (1 << (j & 31));
  });
  const row = new Uint32Array(words).fill(0xffffffff);
  for (const ch of x) {
    const s = slot.get(ch);
    if (s === undefined) continue;
    const base = s * words;
    let carry = 0;
    for (let w = 0; w < words; w++) {
      const v = row[w] as number;
      const match = masks[base + w] as number;
      // row' = (row + (row & match)) | (row & ~match), the add carried across words.
      const sum = v + ((v & match) >>> 0) + carry;
      carry = sum > 0xffffffff ? 1 : 0;
      row[w] = (sum >>> 0) | (v & ~match);
    }
  }
  let ones = 0;
  for (let w = 0; w < words; w++) {
    const bits = w === words - 1 && m % 32 !== 0 ? (row[w] as number) & ((1 << (m % 32)) - 1) : (row[w] as number);
    ones += popcount32(bits);
  }
  return m - ones;
}

/**
 * Similarity of two strings by longest common subsequence: 2·LCS / (|a| + |b|), in
 * [0, 1]; 1 when equal (two empty strings count as equal). Code points, not UTF-16
 * units, so an emoji reversed is one character. Either string past LCS_MAX_CHARS throws
 * AnswerTooLongError (the rubric scores that component 0 with the reason).
 */
export function lcsRatio(a: string, b: string): number {
  const x = codePointsWithin(a, LCS_MAX_CHARS, "answer");
  const y = codePointsWithin(b, LCS_MAX_CHARS, "reference answer");
  if (x.length + y.length === 0) return 1;
  return (2 * lcsLength(x, y)) / (x.length + y.length);
}
