import { describe, expect, it } from "vitest";
import { scoreEpisode, startEpisode, stepEpisode } from "../../engine.js";
import { reverseText } from "./index.js";
import { createRng } from "../../rng.js";
import { scoreCompletion } from "../../engine.js";
import { LCS_MAX_CHARS, lcsLength, lcsRatio } from "./lcs.js";

const assistant = (content: string) => ({ role: "assistant" as const, content });

describe("lcsRatio", () => {
  it("matches hand-computed values", () => {
    expect(lcsRatio("abc", "abc")).toBe(1);
    expect(lcsRatio("", "")).toBe(1);
    expect(lcsRatio("abc", "")).toBe(0);
    // LCS("abcde", "ace") = 3 → 2·3 / 8
    expect(lcsRatio("abcde", "ace")).toBe(0.75);
    // LCS("abc", "cba") = 1 → 2 / 6
    expect(lcsRatio("abc", "cba")).toBeCloseTo(1 / 3, 12);
    // code points: the emoji is one character
    expect(lcsRatio("a😀", "😀a")).toBe(0.5);
  });
});

/** The textbook O(|x|·|y|) table, the reference the bit-parallel lcsLength is checked against. */
function lcsByTable(x: readonly string[], y: readonly string[]): number {
  let prev = new Uint32Array(y.length + 1);
  let curr = new Uint32Array(y.length + 1);
  for (let i = 1; i <= x.length; i++) {
    for (let j = 1; j <= y.length; j++) curr[j] = x[i - 1] === y[j - 1] ? prev[j - 1]! + 1 : Math.max(prev[j]!, curr[j - 1]!);
    [prev, curr] = [curr, prev];
  }
  return prev[y.length]!;
}

describe("lcsLength (bit-parallel)", () => {
  it("equals the DP table on random strings of every size around word boundaries and alphabets", () => {
    const rng = createRng(18);
    const alphabet = ["a", "b", "c", "d", "😀", "é", "z", "q"];
    for (let t = 0; t < 2000; t++) {
      const sigma = 1 + (t % alphabet.length);
      const word = (n: number) => Array.from({ length: n }, () => alphabet[rng.int(0, sigma - 1)]!);
      const x = word(rng.int(0, 140));
      const y = word(rng.int(0, 140));
      expect(lcsLength(x, y), `${x.join("")} / ${y.join("")}`).toBe(lcsByTable(x, y));
    }
  });

  it("equals the DP table at the cap's size", () => {
    const rng = createRng(7);
    const word = (n: number) => Array.from({ length: n }, () => String.fromCharCode(97 + rng.int(0, 25)));
    const x = word(2000);
    const y = word(1500);
    expect(lcsLength(x, y)).toBe(lcsByTable(x, y));
  });
});

describe("lcsRatio input cap", () => {
  it("refuses 30k characters (the request that froze /health for 13 s) and accepts the cap", () => {
    const big = "ab".repeat(15_000);
    expect(() => lcsRatio(big, big)).toThrow(/30000 characters, past this environment's limit of 5000/);
    const atCap = "x".repeat(LCS_MAX_CHARS);
    expect(lcsRatio(atCap, atCap)).toBe(1);
    // Code points: 5,000 emoji (10,000 UTF-16 units) are within the cap.
    expect(lcsRatio("😀".repeat(LCS_MAX_CHARS), "😀")).toBeCloseTo(2 / (LCS_MAX_CHARS + 1), 12);
  });

  it("an over-long completion scores 0 on lcs_ratio with the reason, the rest of the rubric still runs", async () => {
    const big = "ab".repeat(15_000);
    const score = await scoreCompletion(reverseText, { prompt: big, completion: `<answer>${big}</answer>`, answer: big });
    expect(score.components[0]).toMatchObject({ name: "lcs_ratio", score: 0, error: expect.stringMatching(/^AnswerTooLongError: answer is 30000 characters/) });
    expect(score.components[1]).toMatchObject({ name: "format", score: 1 });
  });
});

describe("reverse-text", () => {
  it("has at least 200 paragraphs split into train and eval", () => {
    expect(reverseText.dataset.size("train")! + reverseText.dataset.size("eval")!).toBeGreaterThanOrEqual(200);
    expect(reverseText.dataset.size("eval")).toBe(22);
  });

  it("opens a fixed-seed episode with the same transcript every time", async () => {
    const snap = await startEpisode(reverseText, { split: "eval", seed: 7 });
    expect(snap.index).toBe((await startEpisode(reverseText, { split: "eval", seed: 7 })).index);
    expect(snap.messages).toHaveLength(2);
    expect(snap.messages[0]).toMatchObject({ role: "system" });
    expect(snap.messages).toMatchSnapshot();
  });

  it("scores a perfect, a partial and a malformed answer", async () => {
    const snap = await startEpisode(reverseText, { split: "train", index: 0, seed: 1 });
    const paragraph = snap.messages.at(-1)!.content as string;
    const reversed = Array.from(paragraph).reverse().join("");

    const win = await stepEpisode(reverseText, snap, assistant(`<think>backwards</think>\n<answer>${reversed}</answer>`));
    expect(win.snapshot).toMatchObject({ done: true, stopReason: "single_turn", truncated: false, turn: 1 });
    const perfect = await scoreEpisode(reverseText, win.snapshot);
    expect(perfect.components).toEqual([
      { name: "lcs_ratio", weight: 1, score: 1 },
      { name: "format", weight: 0.2, score: 1 },
    ]);
    expect(perfect.reward).toBeCloseTo(1.2, 12);

    // The paragraph itself, unreversed, in tags: LCS ratio computed by hand-checked lcsRatio.
    const lose = await stepEpisode(reverseText, snap, assistant(`<answer>${paragraph}</answer>`));
    const partial = await scoreEpisode(reverseText, lose.snapshot);
    expect(partial.components[0]!.score).toBeCloseTo(lcsRatio(paragraph, reversed), 12);
    expect(partial.components[0]!.score).toBeLessThan(0.6);

    // No tags: no answer, and text outside tags costs format.
    const malformed = await stepEpisode(reverseText, snap, assistant(reversed));
    const bad = await scoreEpisode(reverseText, malformed.snapshot);
    expect(bad.components).toEqual([
      { name: "lcs_ratio", weight: 1, score: 0 },
      { name: "format", weight: 0.2, score: 0 },
    ]);
    expect(bad.reward).toBe(0);
  });
});
