import { CLIENT_PLAYER } from "../../seats.js";
import { defineRubric, type RewardInputs } from "../../rubric.js";
import { SEATS, type Seat } from "./game.js";
import type { KuhnPokerState } from "./state.js";

/** The most chips a hand can win or lose: chips are divided by it so the component lies in [-1, 1]. */
const MAX_CHIPS = 2;

/**
 * The seat being scored and the hand. The engine scores each seat with `inputs.seat`; a
 * caller that names none gets the seat the client played, when it played only one.
 */
function scored({ state, seat }: RewardInputs<KuhnPokerState>): { state: KuhnPokerState; seat: Seat } {
  if (!state) throw new Error("kuhn-poker scores played hands; a bare completion has no game state");
  if (seat === undefined) {
    const clients = SEATS.filter((s) => state.seats[s] === CLIENT_PLAYER);
    if (clients.length !== 1) throw new Error(`kuhn-poker scores one seat at a time; name it (the client played ${clients.join(" and ") || "no seat"})`);
    return { state, seat: clients[0] as Seat };
  }
  if (!(SEATS as readonly string[]).includes(seat)) throw new Error(`kuhn-poker has no seat "${seat}"`);
  return { state, seat: seat as Seat };
}

/** Per seat: chips won (zero-sum across the seats), invalid moves, and the answer format of the seat's own messages. */
export const kuhnRubric = defineRubric<KuhnPokerState>(
  [
    {
      name: "chips",
      weight: 1,
      description: "Chips the seat won (negative: lost), divided by 2: in [-1, 1]; 0 for an unfinished hand.",
      fn: (inputs) => {
        const { state, seat } = scored(inputs);
        return state.chips[seat] / MAX_CHIPS;
      },
    },
    {
      name: "invalid_moves",
      weight: -0.1,
      description: "Invalid actions the seat sent (unparseable, unknown, or not legal then); each costs 0.1.",
      fn: (inputs) => {
        const { state, seat } = scored(inputs);
        return state.invalid[seat];
      },
    },
    {
      name: "format",
      weight: 0.1,
      description: "Each of the seat's messages is <action>…</action> (optional <think> before it) with nothing outside the tags.",
      fn: ({ completion, parser }) => parser.formatReward(completion),
    },
  ],
  (inputs) => {
    const { state, seat } = scored(inputs);
    const over = state.outcome !== null;
    return {
      win: Number(over && state.outcome?.winner === seat),
      loss: Number(over && state.outcome?.winner !== seat),
      forfeit: Number(state.outcome?.kind === "forfeit" && state.outcome.winner !== seat),
      chips: state.chips[seat],
    };
  },
);
