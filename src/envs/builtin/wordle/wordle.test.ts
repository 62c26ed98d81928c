import { describe, expect, it } from "vitest";
import { contentText } from "../../../protocol/index.js";
import { scoreCompletion, scoreEpisode, startEpisode, stepEpisode, type EpisodeSnapshot } from "../../engine.js";
import allowed from "./allowed.json" with { type: "json" };
import solutions from "./solutions.json" with { type: "json" };
import { scoreGuess } from "./feedback.js";
import { wordle } from "./index.js";

const say = (content: string) => ({ role: "assistant" as const, content });
const guess = (word: string) => say(`<guess>${word}</guess>`);

/** Seed 4 (train) is the word "heart". */
async function play(messages: string[], args: Record<string, unknown> = {}) {
  let snap: EpisodeSnapshot = await startEpisode(wordle, { seed: 4, args });
  const replies: string[] = [];
  for (const m of messages) {
    const step = await stepEpisode(wordle, snap, say(m));
    snap = step.snapshot;
    replies.push(step.reply.map((r) => contentText(r.content)).join("\n"));
  }
  return { snap, replies, score: await scoreEpisode(wordle, snap) };
}

describe("wordle feedback", () => {
  it("marks greens, yellows and repeated letters like Wordle", () => {
    const f = (g: string, a: string) => scoreGuess(g, a).join("");
    expect(f("heart", "heart")).toBe("GGGGG");
    expect(f("crane", "heart")).toBe("-YG-Y");
    expect(f("speed", "abide")).toBe("--Y-Y");
    expect(f("babes", "abbey")).toBe("YYGG-");
    expect(f("books", "robot")).toBe("YGY--");
    expect(f("otter", "robot")).toBe("YY--Y");
    // THERE has two Es: the last E of EERIE is green, which leaves one E for the first
    // (yellow) and none for the second (gray); R is yellow, I gray.
    expect(f("eerie", "there")).toBe("Y-Y-G");
  });

  it("ships real word lists: secrets are accepted guesses, all five lowercase letters", () => {
    expect(solutions.length).toBeGreaterThanOrEqual(300);
    expect(allowed.length).toBeGreaterThanOrEqual(1500);
    const set = new Set(allowed);
    expect(set.size).toBe(allowed.length);
    expect(new Set(solutions).size).toBe(solutions.length);
    for (const w of [...solutions, ...allowed]) expect(w).toMatch(/^[a-z]{5}$/);
    for (const w of solutions) expect(set.has(w), w).toBe(true);
    expect(wordle.dataset.size("train")! + wordle.dataset.size("eval")!).toBe(solutions.length);
  });
});

describe("wordle environment", () => {
  it("opens seed 4 with the rules and the number of guesses", async () => {
    const s = await startEpisode(wordle, { seed: 4 });
    expect(s.index).toBe(365);
    expect(s.messages.at(-1)).toEqual({ role: "user", content: "Guess the secret five-letter word. You have 6 guesses." });
    expect(contentText(s.messages[0]?.content)).toMatch(/^You are playing Wordle\./);
    expect((await startEpisode(wordle, { seed: 4, args: { max_guesses: 4 } })).messages.at(-1)?.content).toBe("Guess the secret five-letter word. You have 4 guesses.");
    expect(s.state).toEqual({ guesses: [], invalidGuesses: 0, used: 0, maxGuesses: 6, solved: false });
  });

  it("scores a winning episode: solved in 2 of 6", async () => {
    const { snap, replies, score } = await play(["<guess>crane</guess>", "<think>H E A R T fits</think><guess>HEART</guess>"]);
    expect(replies[0]).toBe("Guess 1/6: C R A N E\nFeedback:  - Y G - Y\nGuesses left: 5.");
    expect(replies[1]).toBe("Guess 2/6: H E A R T\nFeedback:  G G G G G\n\nSolved in 2!");
    expect([snap.done, snap.stopReason]).toEqual([true, "solved"]);
    expect(score.components.map((c) => [c.name, c.weight, c.score])).toEqual([
      ["solved", 1, 1],
      ["efficiency", 0.5, 5 / 6],
      ["partial", 0.2, 1],
      ["format", 0.1, 1],
    ]);
    expect(score.reward).toBeCloseTo(1 + 0.5 * (5 / 6) + 0.2 + 0.1, 12);
    expect(score.metrics).toEqual({ guesses: 2, invalid_guesses: 0, greens_last: 5, yellows_last: 0, turns: 2 });
  });

  it("scores a losing episode: out of guesses, partial credit from the last guess", async () => {
    const { snap, replies, score } = await play(["<guess>crane</guess>", "<guess>earth</guess>"], { max_guesses: 2 });
    expect(replies[1]).toBe("Guess 2/2: E A R T H\nFeedback:  Y Y Y Y Y\n\nNo guesses left. The word was HEART.");
    expect([snap.done, snap.stopReason]).toEqual([true, "out_of_guesses"]);
    // partial: (0 greens + 0.5 × 5 yellows) / 5 = 0.5 → 0.2 × 0.5; format 1 → 0.1.
    expect(score.components.map((c) => c.score)).toEqual([0, 0, 0.5, 1]);
    expect(score.reward).toBeCloseTo(0.2, 12);
  });

  it("scores a malformed episode: invalid guesses get feedback and use up turns", async () => {
    const { snap, replies, score } = await play(["hello world", "<guess>hi</guess>", "<guess>zzzzz</guess>"], { max_guesses: 3 });
    expect(replies[0]).toBe("Guess 1/3 is invalid: I could not find a guess. Write it as <guess>word</guess>.\nGuesses left: 2.");
    expect(replies[1]).toBe('Guess 2/3 is invalid: "hi" has 2 letters, not 5.\nGuesses left: 1.');
    expect(replies[2]).toBe('Guess 3/3 is invalid: "zzzzz" is not in the word list.\n\nNo guesses left. The word was HEART.');
    expect(snap.stopReason).toBe("out_of_guesses");
    // format: the first message has no tag (0), the others are clean (1, 1) → 2/3.
    expect(score.components.map((c) => c.score)).toEqual([0, 0, 0, 2 / 3]);
    expect(score.reward).toBeCloseTo(0.1 * (2 / 3), 12);
    expect(score.metrics).toMatchObject({ guesses: 3, invalid_guesses: 3 });
  });

  it("accepts any five letters when require_known_words is off", async () => {
    const { replies } = await play(["<guess>zzzzz</guess>"], { require_known_words: false });
    expect(replies[0]).toBe("Guess 1/6: Z Z Z Z Z\nFeedback:  - - - - -\nGuesses left: 5.");
  });

  it("replays a transcript for stateless scoring", async () => {
    const score = await scoreCompletion(wordle, {
      prompt: "Guess the secret five-letter word. You have 6 guesses.",
      completion: [guess("crane"), { role: "user", content: "…" }, guess("slate"), { role: "user", content: "…" }, guess("heart")],
      answer: "heart",
    });
    expect(score.components.map((c) => c.score)).toEqual([1, 4 / 6, 1, 1]);
  });
});
