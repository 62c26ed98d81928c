import { XmlParser } from "../../parsers/xml-parser.js";
import type { Board } from "./board.js";

/** `<move>N</move>`, optionally after `<think>…</think>`: both tic-tac-toe environments read moves so. */
export const moveParser = new XmlParser({ fields: ["think", "move"], answerField: "move", optional: ["think"] });

/** Why a message is not a legal move, or the cell index it names. */
export function readMove(text: string, board: Board): { cell: number } | { error: string } {
  const raw = moveParser.parse(text).move;
  if (raw === undefined || raw === "") return { error: "I could not find a move. Reply with <move>N</move>, where N is the number of an empty cell." };
  if (!/^\d+$/.test(raw)) return { error: `"${raw}" is not a cell number. Reply with <move>N</move>, where N is 1 to 9.` };
  const n = Number(raw);
  if (n < 1 || n > 9) return { error: `Cell ${n} is off the board. Cells are numbered 1 to 9.` };
  if (board[n - 1] !== null) return { error: `Cell ${n} is already taken. Choose an empty cell.` };
  return { cell: n - 1 };
}

