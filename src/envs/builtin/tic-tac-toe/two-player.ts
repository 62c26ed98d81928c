import { z } from "zod";
import { contentText, type ChatMessage } from "../../../protocol/index.js";
import { proceduralDataset } from "../../dataset.js";
import { multiTurnEnv } from "../../define.js";
import { defineRubric } from "../../rubric.js";
import { CLIENT_PLAYER, SeatAssignment, toSeat, type SeatPolicy } from "../../seats.js";
import type { RespondResult } from "../../types.js";
import { emptyBoard, emptyCells, isFull, renderBoard, winner, type Board, type Mark } from "./board.js";
import { moveParser, readMove } from "./moves.js";
import { opponentMove } from "./opponent.js";

/**
 * Tic-tac-toe for two seats, `x` (moves first) and `o`: both played by clients
 * (self-play, one model on both sides), or either by the environment's minimax or random
 * player. Each seat sees the board after the other's move; a seat's own text never
 * reaches the other seat (only the cell it took).
 */

const Args = z
  .object({
    random_move_prob: z.number().min(0).max(1).default(0).describe("For a minimax seat: chance of a random legal move instead of a perfect one."),
    max_invalid_moves: z.number().int().min(1).max(5).default(3).describe("Invalid moves (unparseable, off the board, taken) before a seat forfeits."),
  })
  .strict();
type Args = z.infer<typeof Args>;

const SeatName = z.enum(["x", "o"]);
type SeatName = z.infer<typeof SeatName>;

const State = z
  .object({
    seats: SeatAssignment,
    board: z.array(z.enum(["X", "O"]).nullable()).length(9),
    toPlay: SeatName.nullable(),
    moves: z.array(z.object({ seat: SeatName, cell: z.number().int().min(1).max(9) }).strict()),
    invalid: z.object({ x: z.number().int().min(0), o: z.number().int().min(0) }).strict(),
    /** The winning seat; null for a draw or while the game runs. */
    winner: SeatName.nullable(),
    forfeit: SeatName.nullable(),
    over: z.boolean(),
  })
  .strict();
type State = z.infer<typeof State>;

const MARK: Record<SeatName, Mark> = { x: "X", o: "O" };
const other = (seat: SeatName): SeatName => (seat === "x" ? "o" : "x");

const systemPrompt = (seat: SeatName): string => `You are playing tic-tac-toe as ${MARK[seat]} against another player (${MARK[other(seat)]}). Cells are numbered 1 to 9, left to right and top to bottom:

${renderBoard(emptyBoard())}

X moves first. On your turn, reply with the number of an empty cell inside <move>…</move>, for example <move>5</move>. You may think inside <think>…</think> first; the other player never sees your text, only the cell you take. Three of your marks in a row, column or diagonal wins.`;

const policy = (kind: "minimax" | "random"): SeatPolicy<State, Args> => ({
  description: kind === "minimax" ? "Perfect play (ties broken at random; `random_move_prob` adds mistakes)." : "A uniformly random legal move.",
  act: (state, { seat, rng, args }) => {
    const board = [...state.board] as Board;
    const cell = opponentMove(board, MARK[seat as SeatName], kind, args.random_move_prob, rng);
    return { role: "assistant", content: `<move>${cell + 1}</move>` };
  },
});

const resultLine = (state: State, seat: SeatName): string => {
  if (state.forfeit) return state.forfeit === seat ? "You forfeit the game." : `${MARK[state.forfeit]} forfeits: you win!`;
  if (state.winner === null) return "It's a draw.";
  return state.winner === seat ? "You win!" : `${MARK[state.winner]} wins. You lose.`;
};

function respond(state: State, text: string, seat: SeatName, args: Args): RespondResult<State> {
  const board = [...state.board] as Board;
  const move = readMove(text, board);
  if ("error" in move) {
    const count = state.invalid[seat] + 1;
    const invalid = { ...state.invalid, [seat]: count };
    if (count >= args.max_invalid_moves) {
      const next: State = { ...state, invalid, toPlay: null, forfeit: seat, winner: other(seat), over: true };
      return {
        state: next,
        messages: [toSeat(seat, `${move.error}\n\nThat is ${count} invalid moves: ${resultLine(next, seat)}`), toSeat(other(seat), `${MARK[seat]} made ${count} invalid moves. ${resultLine(next, other(seat))}\n\n${renderBoard(board)}`)],
        done: true,
        stopReason: "too_many_invalid_moves",
      };
    }
    return { state: { ...state, invalid }, messages: [toSeat(seat, `${move.error} (Invalid moves: ${count} of ${args.max_invalid_moves} allowed.)\n\n${renderBoard(board)}\n\nYour move.`)] };
  }
  board[move.cell] = MARK[seat];
  const moves = [...state.moves, { seat, cell: move.cell + 1 }];
  const won = winner(board) === MARK[seat];
  if (won || isFull(board)) {
    const next: State = { ...state, board, moves, toPlay: null, winner: won ? seat : null, over: true };
    const played = `${MARK[seat]} played ${move.cell + 1}.`;
    return {
      state: next,
      messages: (["x", "o"] as const).map((s): ChatMessage => toSeat(s, `${played}\n\n${renderBoard(board)}\n\n${resultLine(next, s)}`)),
      done: true,
      stopReason: "game_over",
    };
  }
  return {
    state: { ...state, board, moves, toPlay: other(seat) },
    messages: [toSeat(other(seat), `${MARK[seat]} played ${move.cell + 1}.\n\n${renderBoard(board)}\n\nYour move.`)],
  };
}

const outcome = (state: State | null, seat: string | undefined): "win" | "draw" | "loss" | "forfeit" | null => {
  if (!state?.over || (seat !== "x" && seat !== "o")) return null;
  if (state.forfeit === seat) return "forfeit";
  if (state.winner === null) return "draw";
  return state.winner === seat ? "win" : "loss";
};

export const ticTacToe2p = multiTurnEnv<Args, State>({
  id: "tic-tac-toe-2p",
  version: "1.0.0",
  description:
    "Tic-tac-toe with two seats, x and o: self-play (both seats played by clients, the default) or either seat against the environment's minimax or random player. Reward per seat: win 1, draw 0.5, loss 0, −0.1 per invalid move, plus format.",
  parser: moveParser,
  argsSchema: Args,
  stateSchema: State,
  // Client steps: at most 9 moves, plus each seat's invalid moves before it forfeits.
  maxTurns: 9 + 2 * 4,
  dataset: proceduralDataset(() => ({ prompt: [], answer: null, info: {} })),
  seats: {
    seats: (["x", "o"] as const).map((name) => ({
      name,
      description: name === "x" ? "Plays X and moves first." : "Plays O and moves second.",
      systemPrompt: systemPrompt(name),
      players: [CLIENT_PLAYER, "minimax", "random"],
      default: CLIENT_PLAYER,
    })),
    policies: { minimax: policy("minimax"), random: policy("random") },
    toPlay: (state) => state.toPlay,
    assignment: (state) => state.seats,
  },
  setup: (_row, { seats }) => {
    const assignment = seats ?? { x: CLIENT_PLAYER, o: CLIENT_PLAYER };
    const vs = (seat: SeatName) => (assignment[other(seat)] === CLIENT_PLAYER ? "another player" : `the environment's ${assignment[other(seat)]} player`);
    return {
      state: { seats: assignment, board: emptyBoard(), toPlay: "x", moves: [], invalid: { x: 0, o: 0 }, winner: null, forfeit: null, over: false },
      messages: [toSeat("x", `You play X against ${vs("x")}. You move first.\n\n${renderBoard(emptyBoard())}\n\nYour move.`), toSeat("o", `You play O against ${vs("o")}. X moves first.`)],
    };
  },
  respond: (state, message, { args, seat }) => respond(state, contentText(message.content), SeatName.parse(seat), args),
  rubric: defineRubric<State>(
    [
      {
        name: "outcome",
        weight: 1,
        description: "This seat's result: 1 for a win, 0.5 for a draw, 0 for a loss, a forfeit or an unfinished game.",
        fn: ({ state, seat }) => {
          if (!state) throw new Error("tic-tac-toe-2p scores played episodes; a bare completion has no game state");
          const o = outcome(state, seat);
          return o === "win" ? 1 : o === "draw" ? 0.5 : 0;
        },
      },
      {
        name: "invalid_moves",
        weight: -0.1,
        description: "This seat's invalid moves (unparseable, off the board, or on a taken cell); each costs 0.1.",
        fn: ({ state, seat }) => (seat === "x" || seat === "o" ? (state?.invalid[seat] ?? 0) : 0),
      },
      {
        name: "format",
        weight: 0.1,
        description: "Each of this seat's messages is <move>N</move> (optional <think> before it) with nothing outside the tags.",
        fn: ({ completion, parser }) => parser.formatReward(completion),
      },
    ],
    ({ state, seat }) => {
      const o = outcome(state, seat);
      return { win: Number(o === "win"), draw: Number(o === "draw"), loss: Number(o === "loss" || o === "forfeit"), forfeit: Number(o === "forfeit") };
    },
  ),
});

/** The cells still free (for tests and policies). */
export const freeCells = (state: State): number[] => emptyCells(state.board as Board).map((i) => i + 1);
