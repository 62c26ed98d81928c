import { describe, expect, it } from "vitest";
import { contentText } from "../../../protocol/index.js";
import { scoreCompletion, scoreEpisode, startEpisode, stepEpisode, type EpisodeSnapshot } from "../../engine.js";
import { createRng } from "../../rng.js";
import { emptyBoard, emptyCells, isFull, other, renderBoard, winner, type Board, type Mark } from "./board.js";
import { optimalMoves } from "./opponent.js";
import { ticTacToe } from "./index.js";

const say = (content: string) => ({ role: "assistant" as const, content });
const move = (cell: number) => say(`<move>${cell}</move>`);
type State = { board: Board; modelMark: Mark; invalidMoves: number; outcome: string | null };

/** Plays until done, the model choosing with `choose` (a 1–9 cell, or any text). */
async function playOut(seed: number, args: Record<string, unknown>, choose: (s: State) => string): Promise<EpisodeSnapshot> {
  let snap = await startEpisode(ticTacToe, { seed, args });
  while (!snap.done) snap = (await stepEpisode(ticTacToe, snap, say(choose(snap.state as State)))).snapshot;
  return snap;
}
const perfect = (s: State) => `<move>${(optimalMoves(s.board, s.modelMark)[0] as number) + 1}</move>`;
const firstEmpty = (s: State) => `<move>${(emptyCells(s.board)[0] as number) + 1}</move>`;

describe("tic-tac-toe board and opponent", () => {
  it("renders the grid with free cells numbered and finds winners", () => {
    const b = emptyBoard();
    b[0] = "X";
    b[4] = "O";
    expect(renderBoard(b)).toBe(" X | 2 | 3\n---+---+---\n 4 | O | 6\n---+---+---\n 7 | 8 | 9");
    b[1] = "X";
    b[2] = "X";
    expect(winner(b)).toBe("X");
    expect(winner(["O", null, null, null, "O", null, null, null, "O"])).toBe("O");
    expect(winner(emptyBoard())).toBeNull();
  });

  it("takes a win, blocks a loss", () => {
    const b: Board = ["X", "X", null, "O", "O", null, null, null, null];
    expect(optimalMoves(b, "X")).toEqual([2]);
    expect(optimalMoves(b, "O")).toEqual([5]);
    const block: Board = ["X", "X", null, null, "O", null, null, null, null];
    expect(optimalMoves(block, "O")).toEqual([2]);
  });

  it("never loses: minimax against every possible line of the other side", () => {
    let leaves = 0;
    const explore = (board: Board, toMove: Mark, perfectMark: Mark): void => {
      const w = winner(board);
      if (w || isFull(board)) {
        expect(w).not.toBe(other(perfectMark));
        leaves++;
        return;
      }
      const moves = toMove === perfectMark ? optimalMoves(board, toMove) : emptyCells(board);
      for (const m of moves) {
        const next = [...board];
        next[m] = toMove;
        explore(next, other(toMove), perfectMark);
      }
    };
    explore(emptyBoard(), "X", "X");
    explore(emptyBoard(), "X", "O");
    expect(leaves).toBeGreaterThan(1000);
  });
});

describe("tic-tac-toe environment", () => {
  it("opens seed 2 with the rules, the model's mark and the empty board", async () => {
    const s = await startEpisode(ticTacToe, { seed: 2 });
    expect(s.messages).toHaveLength(2);
    expect(s.messages[0]?.role).toBe("system");
    expect(contentText(s.messages[0]?.content)).toContain(" 1 | 2 | 3\n---+---+---\n 4 | 5 | 6\n---+---+---\n 7 | 8 | 9");
    expect(s.messages[1]).toEqual({
      role: "user",
      content: "You play O; your opponent plays X. You move first.\n\n 1 | 2 | 3\n---+---+---\n 4 | 5 | 6\n---+---+---\n 7 | 8 | 9\n\nYour move.",
    });
    expect(s.state).toEqual({ board: emptyBoard(), modelMark: "O", invalidMoves: 0, moves: [], outcome: null });
  });

  it("opens seed 1 after the opponent's first move", async () => {
    const s = await startEpisode(ticTacToe, { seed: 1 });
    expect(s.messages[1]).toEqual({
      role: "user",
      content: "You play X; your opponent plays O and moved first, taking cell 7.\n\n 1 | 2 | 3\n---+---+---\n 4 | 5 | 6\n---+---+---\n O | 8 | 9\n\nYour move.",
    });
  });

  it("answers a move with both moves and the new board, the same way on replay", async () => {
    const s = await startEpisode(ticTacToe, { seed: 2 });
    const a = await stepEpisode(ticTacToe, s, move(5));
    const b = await stepEpisode(ticTacToe, s, move(5));
    expect(a.reply).toEqual(b.reply);
    const text = contentText(a.reply[0]?.content);
    const opp = (a.snapshot.state as { moves: { by: string; cell: number }[] }).moves[1]!.cell;
    expect(text).toMatch(new RegExp(`^You played 5\\. X played ${opp}\\.\\n\\n`));
    expect(text).toContain(renderBoard((a.snapshot.state as State).board));
    expect(text.endsWith("Your move.")).toBe(true);
    expect(a.snapshot.done).toBe(false);
  });

  it("rejects an occupied cell, an off-board cell and an unparseable move with feedback", async () => {
    const s = await startEpisode(ticTacToe, { seed: 1 });
    const taken = await stepEpisode(ticTacToe, s, move(7));
    expect(contentText(taken.reply[0]?.content)).toBe(
      "Cell 7 is already taken. Choose an empty cell. (Invalid moves: 1 of 3 allowed.)\n\n 1 | 2 | 3\n---+---+---\n 4 | 5 | 6\n---+---+---\n O | 8 | 9\n\nYour move.",
    );
    const off = await stepEpisode(ticTacToe, taken.snapshot, move(10));
    expect(contentText(off.reply[0]?.content)).toMatch(/^Cell 10 is off the board/);
    const none = await stepEpisode(ticTacToe, off.snapshot, say("the centre, please"));
    expect(contentText(none.reply[0]?.content)).toMatch(/^I could not find a move\..*\n\nThat is 3 invalid moves: you forfeit the game\./s);
    expect([none.snapshot.done, none.snapshot.stopReason]).toEqual([true, "too_many_invalid_moves"]);
  });

  it("scores a won game against the random opponent: 1 + 0.1 format", async () => {
    const snap = await playOut(2, { opponent: "random" }, perfect);
    expect([snap.stopReason, (snap.state as State).outcome]).toEqual(["game_over", "win"]);
    expect(contentText(snap.messages.at(-1)?.content)).toMatch(/\n\nYou win!$/);
    const score = await scoreEpisode(ticTacToe, snap);
    expect(score.components).toEqual([
      { name: "outcome", weight: 1, score: 1 },
      { name: "invalid_moves", weight: -0.1, score: 0 },
      { name: "format", weight: 0.1, score: 1 },
    ]);
    expect(score.reward).toBeCloseTo(1.1, 12);
    expect(score.metrics).toMatchObject({ win: 1, draw: 0, loss: 0, forfeit: 0 });
  });

  it("scores a draw between two perfect players: 0.5 + 0.1", async () => {
    const snap = await playOut(5, { opponent: "minimax" }, perfect);
    expect((snap.state as State).outcome).toBe("draw");
    expect(contentText(snap.messages.at(-1)?.content)).toMatch(/It's a draw\.$/);
    expect((await scoreEpisode(ticTacToe, snap)).reward).toBeCloseTo(0.6, 12);
  });

  it("scores a lost game with one invalid move: 0 − 0.1 + 0.1", async () => {
    let first = true;
    const snap = await playOut(2, { opponent: "minimax" }, (s) => {
      if (first) {
        first = false;
        return "<move>0</move>";
      }
      return firstEmpty(s);
    });
    const state = snap.state as State;
    expect([state.outcome, state.invalidMoves, snap.stopReason]).toEqual(["loss", 1, "game_over"]);
    expect(contentText(snap.messages.at(-1)?.content)).toMatch(/X wins\. You lose\.$/);
    const score = await scoreEpisode(ticTacToe, snap);
    expect(score.components.map((c) => c.score)).toEqual([0, 1, 1]);
    expect(score.reward).toBeCloseTo(0, 12);
    expect(score.metrics).toMatchObject({ loss: 1, win: 0 });
  });

  it("scores a malformed episode: three unparseable moves forfeit, −0.3", async () => {
    const snap = await playOut(1, { max_invalid_moves: 3 }, () => "I take the middle square.");
    expect([snap.turn, snap.stopReason, (snap.state as State).outcome]).toEqual([3, "too_many_invalid_moves", "forfeit"]);
    const score = await scoreEpisode(ticTacToe, snap);
    expect(score.components.map((c) => c.score)).toEqual([0, 3, 0]);
    expect(score.reward).toBeCloseTo(-0.3, 12);
    expect(score.metrics).toMatchObject({ forfeit: 1, loss: 1, model_moves: 0 });
  });

  it("mixes in random moves with random_move_prob", async () => {
    let suboptimal = 0;
    for (let seed = 0; seed < 30; seed++) {
      const rng = createRng(seed);
      const snap = await playOut(seed, { opponent: "minimax", random_move_prob: 1 }, () => `<move>${rng.int(1, 9)}</move>`);
      const s = snap.state as State & { moves: { by: string; cell: number }[] };
      if (s.outcome === "win") suboptimal++;
    }
    // A perfect opponent never loses; one that always plays randomly loses some games even to random play.
    expect(suboptimal).toBeGreaterThan(0);
    await expect(startEpisode(ticTacToe, { args: { opponent: "genius" } })).rejects.toThrow(/opponent/);
  });

  it("does not score a bare completion (no game state)", async () => {
    const score = await scoreCompletion(ticTacToe, { prompt: "play", completion: "<move>5</move>" });
    expect(score.components[0]).toMatchObject({ name: "outcome", score: 0, error: expect.stringMatching(/game state/) });
  });
});
