import { describe, expect, it } from "vitest";
import { scoreEpisode, startEpisode, stepEpisode } from "../../engine.js";
import { reverseText } from "./index.js";
import { lcsRatio } from "./lcs.js";

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
