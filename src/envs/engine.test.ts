import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineRubric } from "./rubric.js";
import { multiTurnEnv } from "./define.js";
import { rowsDataset } from "./dataset.js";
import { EngineError, scoreEpisode, startEpisode, stepEpisode } from "./engine.js";

const guess = multiTurnEnv<{ limit: number }, { target: number; tries: number }>({
  id: "guess",
  version: "1.0.0",
  description: "guess a number with higher/lower hints",
  argsSchema: z.object({ limit: z.number().int().min(2).default(10) }).strict(),
  stateSchema: z.object({ target: z.number(), tries: z.number() }),
  dataset: rowsDataset({ train: [{ prompt: "Guess my number." }] }),
  maxTurns: 4,
  setup: (_row, { args, rng }) => ({ state: { target: rng.int(1, args.limit), tries: 0 } }),
  respond: (state, message) => {
    const n = Number(message.content);
    const tries = state.tries + 1;
    if (n === state.target) return { state: { ...state, tries }, messages: [{ role: "user", content: "correct" }], done: true, stopReason: "solved" };
    if (Number.isNaN(n)) throw new Error("not a number");
    return { state: { ...state, tries }, messages: [{ role: "user", content: n < state.target ? "higher" : "lower" }] };
  },
  rubric: defineRubric([{ name: "solved", weight: 1, fn: ({ completion }) => Number(completion.at(-1)?.content === "correct") }]),
});

describe("engine", () => {
  it("validates args and reports them as invalid_env_args", async () => {
    await expect(startEpisode(guess, { args: { limit: 1 } })).rejects.toMatchObject({ code: "invalid_env_args" });
    await expect(startEpisode(guess, { index: 3 })).rejects.toBeInstanceOf(EngineError);
  });

  it("replays the same game from the same seed, and stops on the env's own verdict", async () => {
    const a = await startEpisode(guess, { seed: 12, args: { limit: 8 } });
    const b = await startEpisode(guess, { seed: 12, args: { limit: 8 } });
    expect(a.state).toEqual(b.state);
    const target = (a.state as { target: number }).target;
    let snap = a;
    for (const n of [1, 2, 3, 4, 5, 6, 7, 8]) {
      if (n === target) break;
      if (snap.turn === 3) break;
      snap = (await stepEpisode(guess, snap, { role: "assistant", content: String(n) })).snapshot;
    }
    const final = await stepEpisode(guess, snap, { role: "assistant", content: String(target) });
    expect(final.reply).toEqual([{ role: "user", content: "correct" }]);
    expect(final.snapshot).toMatchObject({ done: true, stopReason: "solved", truncated: false });
    expect((await scoreEpisode(guess, final.snapshot)).reward).toBe(1);
  });

  it("truncates at max turns and ends with env_error when respond throws, keeping the transcript", async () => {
    let snap = await startEpisode(guess, { seed: 1, args: { limit: 1000 } });
    for (let i = 0; i < 4; i++) snap = (await stepEpisode(guess, snap, { role: "assistant", content: "0" })).snapshot;
    expect(snap).toMatchObject({ done: true, stopReason: "max_turns", truncated: true, turn: 4 });

    const fresh = await startEpisode(guess, { seed: 1 });
    const broken = await stepEpisode(guess, fresh, { role: "assistant", content: "banana" });
    expect(broken.snapshot).toMatchObject({ done: true, stopReason: "env_error", error: "Error: not a number" });
    expect(broken.snapshot.messages.at(-1)).toEqual({ role: "assistant", content: "banana" });
  });

  it("scores a throwing reward function as 0 and reports its error", async () => {
    const env = { ...guess, rubric: defineRubric<{ target: number; tries: number }>([
      { name: "ok", weight: 1, fn: () => 0.5 },
      { name: "broken", weight: 1, fn: () => { throw new TypeError("bad reward"); } },
      { name: "nan", weight: 1, fn: () => Number.NaN },
      { name: "tries", weight: 0, fn: ({ state }) => state?.tries ?? -1 },
    ]) };
    const snap = await startEpisode(env, { seed: 3 });
    const score = await scoreEpisode(env, snap);
    expect(score.reward).toBe(0.5);
    expect(score.components[1]).toEqual({ name: "broken", weight: 1, score: 0, error: "TypeError: bad reward" });
    expect(score.components[2]?.error).toMatch(/not a finite number/);
    expect(score.metrics).toEqual({ tries: 0, turns: 0 });
  });
});
