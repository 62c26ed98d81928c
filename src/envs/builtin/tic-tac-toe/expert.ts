import { contentText, type ChatMessage } from "../../../protocol/index.js";
import { createRng } from "../../rng.js";
import type { Board, Cell, Mark } from "./board.js";
import { optimalMoves } from "./opponent.js";

/** One rendered row, ` X | 2 | 3`: a mark or the free cell's number in each column. */
const ROW = /^\s*([XO1-9])\s*\|\s*([XO1-9])\s*\|\s*([XO1-9])\s*$/;
const MARK = /You play ([XO])\b/;

/**
 * The board the last message shows and the mark the model plays, read from the transcript
 * exactly as the model sees it (the expert has no access to the episode's state). Throws
 * when the transcript holds no board: the rollout then fails instead of guessing.
 */
export function readTranscript(messages: readonly ChatMessage[]): { board: Board; mark: Mark } {
  let mark: Mark | null = null;
  for (const m of messages) {
    if (m.role !== "user") continue;
    const found = MARK.exec(contentText(m.content));
    if (found) {
      mark = found[1] as Mark;
      break;
    }
  }
  if (!mark) throw new Error("tic-tac-toe expert: no \"You play X/O\" line in the transcript");
  const last = [...messages].reverse().find((m) => m.role === "user");
  const lines = last ? contentText(last.content).split("\n") : [];
  // The last three rows rendered in the last user message: feedback text may precede the grid.
  const rows = lines.map((l) => ROW.exec(l)).filter((r): r is RegExpExecArray => r !== null).slice(-3);
  if (rows.length !== 3) throw new Error("tic-tac-toe expert: the last user message shows no board");
  const board: Cell[] = rows.flatMap((r) => [r[1], r[2], r[3]].map((c) => (c === "X" || c === "O" ? c : null)));
  return { board, mark };
}

/** FNV-1a over the transcript's text: the tie-break between equally good moves, stable per position. */
function transcriptHash(messages: readonly ChatMessage[]): number {
  let h = 0x811c9dc5;
  for (const m of messages) {
    const text = `${m.role}:${contentText(m.content ?? "")}\n`;
    for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  }
  return h;
}

/**
 * The perfect player as a policy: an optimal move (the environment's own minimax solver)
 * for the position in the transcript, written the way the environment asks, `<move>N</move>`.
 * Ties between optimal moves are broken by a hash of the transcript, so the same position
 * always gets the same reply while different games show different (equally good) openings.
 */
export function ticTacToeExpertMove(messages: readonly ChatMessage[]): string {
  const { board, mark } = readTranscript(messages);
  const moves = optimalMoves(board, mark);
  if (moves.length === 0) throw new Error("tic-tac-toe expert: the board is full");
  const cell = createRng(transcriptHash(messages)).pick(moves);
  return `<move>${cell + 1}</move>`;
}
