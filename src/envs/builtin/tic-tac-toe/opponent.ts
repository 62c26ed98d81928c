import type { Rng } from "../../rng.js";
import { emptyCells, isFull, other, winner, type Board, type Cell, type Mark } from "./board.js";

/**
 * Game value for `toMove` under perfect play: +1 win, 0 draw, −1 loss, scaled so a
 * quicker win (or a slower loss) is worth more. Memoised: there are at most 3⁹ boards.
 */
const cache = new Map<string, number>();

/** A win now, after `board` has this many marks: sooner is better. */
const winValue = (board: readonly Cell[]): number => 10 - (9 - emptyCells(board).length) / 10;

/** `mark` has just moved on `board`: the value for `mark`. */
function afterMove(board: Cell[], mark: Mark): number {
  if (winner(board) === mark) return winValue(board);
  return isFull(board) ? 0 : -value(board, other(mark));
}

function value(board: Cell[], toMove: Mark): number {
  const key = board.map((c) => c ?? "-").join("") + toMove;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  let best = -Infinity;
  for (const i of emptyCells(board)) {
    board[i] = toMove;
    const v = afterMove(board, toMove);
    board[i] = null;
    if (v > best) best = v;
  }
  cache.set(key, best);
  return best;
}

/** Every move that is optimal for `mark` (a win soonest, else a draw, else the longest loss). */
export function optimalMoves(board: readonly Cell[], mark: Mark): number[] {
  const work = [...board];
  let best = -Infinity;
  let moves: number[] = [];
  for (const i of emptyCells(work)) {
    work[i] = mark;
    const v = afterMove(work, mark);
    work[i] = null;
    if (v > best + 1e-9) {
      best = v;
      moves = [i];
    } else if (Math.abs(v - best) <= 1e-9) moves.push(i);
  }
  return moves;
}

export type OpponentKind = "random" | "minimax";

/** The opponent's move: random, or minimax with ties (and, with `randomMoveProb`, mistakes) broken by the episode's rng. */
export function opponentMove(board: Board, mark: Mark, kind: OpponentKind, randomMoveProb: number, rng: Rng): number {
  const free = emptyCells(board);
  if (free.length === 0) throw new Error("no move left");
  if (kind === "random" || rng.next() < randomMoveProb) return rng.pick(free);
  return rng.pick(optimalMoves(board, mark));
}
