import { z } from "zod";
import { contentText, type ChatMessage } from "../../../protocol/index.js";
import { proceduralDataset } from "../../dataset.js";
import { multiTurnEnv } from "../../define.js";
import { defineRubric } from "../../rubric.js";
import type { RespondResult } from "../../types.js";
import { emptyBoard, isFull, other, renderBoard, winner, type Board, type Mark } from "./board.js";
import { opponentMove } from "./opponent.js";
import { moveParser, readMove } from "./moves.js";

export { moveParser };

const TicTacToeArgs = z
  .object({
    opponent: z.enum(["random", "minimax"]).default("minimax").describe("random: uniform legal moves; minimax: perfect play."),
    random_move_prob: z
      .number()
      .min(0)
      .max(1)
      .default(0)
      .describe("For the minimax opponent: chance of a random legal move instead of a perfect one (a beatable opponent)."),
    max_invalid_moves: z.number().int().min(1).max(5).default(3).describe("Invalid moves (unparseable, out of range, occupied) before the model forfeits."),
  })
  .strict();
type TicTacToeArgs = z.infer<typeof TicTacToeArgs>;

const MarkSchema = z.enum(["X", "O"]);
const Outcome = z.enum(["win", "draw", "loss", "forfeit"]);
const TicTacToeState = z
  .object({
    board: z.array(MarkSchema.nullable()).length(9),
    modelMark: MarkSchema,
    invalidMoves: z.number().int().min(0),
    /** Cells (1–9) in the order they were taken, by whom. */
    moves: z.array(z.object({ by: z.enum(["model", "opponent"]), cell: z.number().int().min(1).max(9) }).strict()),
    outcome: Outcome.nullable(),
  })
  .strict();
type TicTacToeState = z.infer<typeof TicTacToeState>;


const SYSTEM_PROMPT = `You are playing tic-tac-toe on a 3×3 board. Cells are numbered 1 to 9, left to right and top to bottom:

${renderBoard(emptyBoard())}

On your turn, reply with the number of an empty cell inside <move>…</move>, for example <move>5</move>. You may think inside <think>…</think> first. Three of your marks in a row, column or diagonal wins. After each of your moves the opponent replies and you see the board again.`;

interface Opening {
  modelMark: Mark;
  modelFirst: boolean;
  /** The opponent's first move (0–8) when it moves first. */
  openingMove: number | null;
}

function openingPrompt(o: Opening, board: Board): string {
  const opp = other(o.modelMark);
  const who = o.modelFirst
    ? `You play ${o.modelMark}; your opponent plays ${opp}. You move first.`
    : `You play ${o.modelMark}; your opponent plays ${opp} and moved first, taking cell ${(o.openingMove as number) + 1}.`;
  return `${who}\n\n${renderBoard(board)}\n\nYour move.`;
}

function boardAfterOpening(o: Opening): Board {
  const board = emptyBoard();
  if (o.openingMove !== null) board[o.openingMove] = other(o.modelMark);
  return board;
}

function readOpening(info: Record<string, unknown> | undefined): Opening {
  const parsed = z.object({ model_mark: MarkSchema, model_first: z.boolean(), opening_move: z.number().int().min(0).max(8).nullable() }).parse(info);
  return { modelMark: parsed.model_mark, modelFirst: parsed.model_first, openingMove: parsed.opening_move };
}

const user = (content: string): ChatMessage => ({ role: "user", content });

/**
 * Tic-tac-toe against a random or perfect (minimax) opponent. The seed decides the
 * model's mark and who moves first; the board is shown after every move. A win is worth
 * 1, a draw 0.5; each invalid move costs 0.1, and too many forfeit the game.
 */
export const ticTacToe = multiTurnEnv<TicTacToeArgs, TicTacToeState>({
  id: "tic-tac-toe",
  version: "1.0.0",
  description: "Play tic-tac-toe against a random or minimax opponent, one <move>N</move> (cells 1–9) per turn. Reward: win 1, draw 0.5, loss 0, −0.1 per invalid move, plus format.",
  systemPrompt: SYSTEM_PROMPT,
  parser: moveParser,
  argsSchema: TicTacToeArgs,
  stateSchema: TicTacToeState,
  // At most 5 moves of the model's plus at most 4 invalid ones before the 5th forfeits.
  maxTurns: 10,
  dataset: proceduralDataset((rng, _split, _index, rawArgs) => {
    const args = TicTacToeArgs.parse(rawArgs ?? {});
    const modelMark = rng.pick(["X", "O"] as const);
    const modelFirst = rng.next() < 0.5;
    const opening: Opening = { modelMark, modelFirst, openingMove: modelFirst ? null : opponentMove(emptyBoard(), other(modelMark), args.opponent, args.random_move_prob, rng) };
    return {
      prompt: openingPrompt(opening, boardAfterOpening(opening)),
      answer: null,
      info: { model_mark: modelMark, model_first: modelFirst, opening_move: opening.openingMove },
    };
  }),
  setup: (row) => {
    const opening = readOpening(row.info);
    return {
      state: {
        board: boardAfterOpening(opening),
        modelMark: opening.modelMark,
        invalidMoves: 0,
        moves: opening.openingMove === null ? [] : [{ by: "opponent", cell: opening.openingMove + 1 }],
        outcome: null,
      },
    };
  },
  respond: (state, message, { args, rng }): RespondResult<TicTacToeState> => {
    const board = [...state.board];
    const me = state.modelMark;
    const opp = other(me);
    const move = readMove(contentText(message.content), board);
    if ("error" in move) {
      const invalidMoves = state.invalidMoves + 1;
      if (invalidMoves >= args.max_invalid_moves) {
        return {
          state: { ...state, invalidMoves, outcome: "forfeit" },
          messages: [user(`${move.error}\n\nThat is ${invalidMoves} invalid moves: you forfeit the game.\n\n${renderBoard(board)}`)],
          done: true,
          stopReason: "too_many_invalid_moves",
        };
      }
      return {
        state: { ...state, invalidMoves },
        messages: [user(`${move.error} (Invalid moves: ${invalidMoves} of ${args.max_invalid_moves} allowed.)\n\n${renderBoard(board)}\n\nYour move.`)],
      };
    }
    board[move.cell] = me;
    const moves = [...state.moves, { by: "model" as const, cell: move.cell + 1 }];
    const end = (outcome: "win" | "draw" | "loss", text: string): RespondResult<TicTacToeState> => ({
      state: { ...state, board, moves, outcome },
      messages: [user(`${text}\n\n${renderBoard(board)}\n\n${{ win: "You win!", draw: "It's a draw.", loss: `${opp} wins. You lose.` }[outcome]}`)],
      done: true,
      stopReason: "game_over",
    });
    const played = `You played ${move.cell + 1}.`;
    if (winner(board) === me) return end("win", played);
    if (isFull(board)) return end("draw", played);
    const reply = opponentMove(board, opp, args.opponent, args.random_move_prob, rng);
    board[reply] = opp;
    moves.push({ by: "opponent", cell: reply + 1 });
    const both = `${played} ${opp} played ${reply + 1}.`;
    if (winner(board) === opp) return end("loss", both);
    if (isFull(board)) return end("draw", both);
    return { state: { ...state, board, moves }, messages: [user(`${both}\n\n${renderBoard(board)}\n\nYour move.`)] };
  },
  rubric: defineRubric<TicTacToeState>(
    [
      {
        name: "outcome",
        weight: 1,
        description: "1 for a win, 0.5 for a draw, 0 for a loss, a forfeit or an unfinished game.",
        fn: ({ state }) => {
          if (!state) throw new Error("tic-tac-toe scores played episodes; a bare completion has no game state");
          return state.outcome === "win" ? 1 : state.outcome === "draw" ? 0.5 : 0;
        },
      },
      {
        name: "invalid_moves",
        weight: -0.1,
        description: "Number of invalid moves (unparseable, off the board, or on a taken cell); each costs 0.1.",
        fn: ({ state }) => state?.invalidMoves ?? 0,
      },
      {
        name: "format",
        weight: 0.1,
        description: "Each message is <move>N</move> (optional <think> before it) with nothing outside the tags.",
        fn: ({ completion, parser }) => parser.formatReward(completion),
      },
    ],
    ({ state }) => ({
      win: Number(state?.outcome === "win"),
      draw: Number(state?.outcome === "draw"),
      loss: Number(state?.outcome === "loss" || state?.outcome === "forfeit"),
      forfeit: Number(state?.outcome === "forfeit"),
      model_moves: state?.moves.filter((m) => m.by === "model").length ?? 0,
    }),
  ),
});
