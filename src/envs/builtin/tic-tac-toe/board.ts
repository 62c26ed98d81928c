/** Tic-tac-toe rules: a board is nine cells, index 0–8, shown to the model as 1–9. */
export type Mark = "X" | "O";
export type Cell = Mark | null;
export type Board = Cell[];

export const emptyBoard = (): Board => Array<Cell>(9).fill(null);

const LINES = [
  [0, 1, 2], [3, 4, 5], [6, 7, 8],
  [0, 3, 6], [1, 4, 7], [2, 5, 8],
  [0, 4, 8], [2, 4, 6],
] as const;

export const other = (mark: Mark): Mark => (mark === "X" ? "O" : "X");

export function winner(board: readonly Cell[]): Mark | null {
  for (const [a, b, c] of LINES) {
    const m = board[a];
    if (m && m === board[b] && m === board[c]) return m;
  }
  return null;
}

export function emptyCells(board: readonly Cell[]): number[] {
  return board.flatMap((c, i) => (c === null ? [i] : []));
}

export const isFull = (board: readonly Cell[]): boolean => board.every((c) => c !== null);

/**
 * The board as text, empty cells showing their number so the model can name them:
 *
 *  X | 2 | 3
 * ---+---+---
 *  4 | O | 6
 * ---+---+---
 *  7 | 8 | 9
 */
export function renderBoard(board: readonly Cell[]): string {
  const row = (r: number) => [0, 1, 2].map((c) => ` ${board[r * 3 + c] ?? String(r * 3 + c + 1)} `).join("|");
  return [row(0), "---+---+---", row(1), "---+---+---", row(2)].map((line) => line.trimEnd()).join("\n");
}
