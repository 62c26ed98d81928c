import { describe, expect, it } from "vitest";
import { EngineError, scoreEpisode, startEpisode, stepEpisode, type EpisodeSnapshot } from "../../engine.js";
import { seatView } from "../../seats.js";
import { unseenBy } from "../../seat-play.js";
import { ticTacToe2p } from "./two-player.js";

interface Game {
  board: (string | null)[];
  moves: unknown[];
}
const game = (s: EpisodeSnapshot): Game => s.state as Game;
const move = (cell: number, think = "") => ({ role: "assistant" as const, content: `${think}<move>${cell}</move>` });

async function play(snapshot: EpisodeSnapshot, moves: [string, number][]): Promise<EpisodeSnapshot> {
  let s = snapshot;
  for (const [seat, cell] of moves) s = (await stepEpisode(ticTacToe2p, s, move(cell), { seat })).snapshot;
  return s;
}

describe("tic-tac-toe-2p: seats", () => {
  it("self-play by default: each seat opens with its own system prompt and message, x to play", async () => {
    const s = await startEpisode(ticTacToe2p, { seed: 1 });
    expect(s.state).toMatchObject({ seats: { x: "client", o: "client" }, toPlay: "x" });
    expect(s.messages.every((m) => m.name === "x" || m.name === "o")).toBe(true);
    expect(seatView(s.messages, "x").map((m) => m.role)).toEqual(["system", "user"]);
    expect(seatView(s.messages, "o").map((m) => m.role)).toEqual(["system", "user"]);
    expect(seatView(s.messages, "x")[1]?.content).toMatch(/You move first/);
  });

  it("plays a whole self-play game and scores each seat: x wins, o loses, shares one log", async () => {
    const start = await startEpisode(ticTacToe2p, { seed: 1 });
    const end = await play(start, [["x", 1], ["o", 4], ["x", 2], ["o", 5], ["x", 3]]);
    expect(end.done).toBe(true);
    expect(end.stopReason).toBe("game_over");
    expect(end.turn).toBe(5);
    const score = await scoreEpisode(ticTacToe2p, end);
    expect(score.seats?.x?.reward).toBeCloseTo(1.1);
    expect(score.seats?.o?.reward).toBeCloseTo(0.1);
    expect(score.seats?.x?.metrics).toMatchObject({ win: 1, moves: 3 });
    expect(score.seats?.o?.metrics).toMatchObject({ loss: 1, moves: 2 });
    // The top-level reward is the first client seat's (x).
    expect(score.reward).toBeCloseTo(1.1);
    expect(seatView(end.messages, "o").at(-1)?.content).toMatch(/You lose/);
  });

  it("never shows one seat the other's text, only the cell it took", async () => {
    const start = await startEpisode(ticTacToe2p, { seed: 2 });
    const { snapshot, reply } = await stepEpisode(ticTacToe2p, start, move(5, "<think>secret plan: corner next</think>"), { seat: "x" });
    expect(JSON.stringify(seatView(snapshot.messages, "o"))).not.toMatch(/secret plan/);
    expect(unseenBy(snapshot.messages, "o").map((m) => m.content)).toEqual([expect.stringMatching(/^You are playing/), expect.stringMatching(/X moves first/), expect.stringMatching(/X played 5/)]);
    expect(reply.every((m) => m.name === "o")).toBe(true);
  });

  it("refuses a step by the seat whose turn it is not, an unknown seat, and a seat the environment plays", async () => {
    const start = await startEpisode(ticTacToe2p, { seed: 3 });
    await expect(stepEpisode(ticTacToe2p, start, move(1), { seat: "o" })).rejects.toMatchObject({ code: "not_your_turn", details: { to_play: "x" } });
    await expect(stepEpisode(ticTacToe2p, start, move(1), { seat: "z" })).rejects.toMatchObject({ code: "unknown_seat" });
    await expect(stepEpisode(ticTacToe2p, start, move(1))).rejects.toMatchObject({ code: "seat_required" });
    const vsMinimax = await startEpisode(ticTacToe2p, { seed: 3, seats: { o: "minimax" } });
    await expect(stepEpisode(ticTacToe2p, vsMinimax, move(1), { seat: "o" })).rejects.toMatchObject({ code: "seat_not_client" });
  });

  it("plays the environment's seat itself: minimax as x opens at reset, and a client never beats it", async () => {
    const start = await startEpisode(ticTacToe2p, { seed: 4, seats: { x: "minimax", o: "client" } });
    expect(start.state).toMatchObject({ toPlay: "o" });
    expect(game(start).moves).toHaveLength(1);
    // The only client seat is the default seat of a step.
    let s = start;
    while (!s.done) {
      const free = game(s).board.flatMap((c, i) => (c === null ? [i + 1] : []));
      s = (await stepEpisode(ticTacToe2p, s, move(free[0] as number))).snapshot;
    }
    const score = await scoreEpisode(ticTacToe2p, s);
    expect(score.seats?.x?.metrics.loss).toBe(0);
    expect(score.reward).toBe(score.seats?.o?.reward);
  });

  it("refuses bad seat requests at reset with stable codes", async () => {
    const codes = async (seats: Record<string, string>) => startEpisode(ticTacToe2p, { seats }).then(() => "ok", (e: EngineError) => e.code);
    expect(await codes({ z: "client" })).toBe("unknown_seat");
    expect(await codes({ x: "alphazero" })).toBe("unknown_policy");
    expect(await codes({ x: "minimax", o: "random" })).toBe("no_client_seat");
  });

  it("replays exactly: the same seed and moves against random give the same game", async () => {
    const run = async () => {
      let s = await startEpisode(ticTacToe2p, { seed: 99, seats: { o: "random" } });
      while (!s.done) {
        const free = game(s).board.flatMap((c, i) => (c === null ? [i + 1] : []));
        s = (await stepEpisode(ticTacToe2p, s, move(free[free.length - 1] as number))).snapshot;
      }
      return game(s).moves;
    };
    expect(await run()).toEqual(await run());
  });
});
