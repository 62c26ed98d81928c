import { z } from "zod";
import { contentText } from "../../../protocol/index.js";
import { proceduralDataset } from "../../dataset.js";
import { multiTurnEnv } from "../../define.js";
import { CLIENT_PLAYER, toSeat, type SeatSpec } from "../../seats.js";
import { CARDS, deal, legalActions, seatToAct, SEATS, type Hands, type Seat } from "./game.js";
import { createRng } from "../../rng.js";
import { dealText, systemPrompt } from "./messages.js";
import { actionParser, playMessage } from "./play.js";
import { kuhnPolicies } from "./policies.js";
import { kuhnRubric } from "./rubric.js";
import { KuhnPokerArgs, KuhnPokerState } from "./state.js";

const PLAYERS = [CLIENT_PLAYER, "random", "nash"];

const SEAT_SPECS: SeatSpec[] = [
  { name: "p1", description: "Player 1: acts first.", systemPrompt: systemPrompt("p1"), players: PLAYERS, default: CLIENT_PLAYER, trainable: true },
  { name: "p2", description: "Player 2: acts second.", systemPrompt: systemPrompt("p2"), players: PLAYERS, default: "nash", trainable: true },
];

const DEFAULT_SEATS = { p1: CLIENT_PLAYER, p2: "nash" };

/**
 * A deal an operator's dataset may fix in a row's `info` (`{"cards": {"p1": "K", "p2": "J"}}`).
 * The built-in dataset leaves `info` empty and `setup` deals from the task's index: a row's
 * `info` is published by GET /v1/envs/{id}/examples, and p2's card must not be read there.
 */
const Deal = z.object({ cards: z.object({ p1: z.enum(CARDS), p2: z.enum(CARDS) }).strict() });

/** The deal of task `index` of `split`: the same on every reload, never written into the row. */
const DEAL_STREAM = 0xdea1;
const dealFor = (split: string, index: number): Hands => deal(createRng(index, split === "train" ? 1 : 2, DEAL_STREAM).shuffle);

/**
 * Kuhn poker for two seats, p1 and p2, each played by the client, a random player or an
 * equilibrium player (nash). The task's index decides the deal (dealt in setup, never written into the task's row); each seat sees only its own
 * card, and its opponent's action words, until a showdown. Each seat is scored on the chips
 * it won (divided by 2), its invalid moves and its answer format. A plain reset is the
 * client as p1 against the equilibrium, whose expected result for p1 is −1/18 chip a hand.
 */
export const kuhnPoker = multiTurnEnv<KuhnPokerArgs, KuhnPokerState>({
  id: "kuhn-poker",
  version: "1.0.0",
  description:
    "Kuhn poker (J<Q<K, one card each, ante 1, bet 1) for two seats, p1 and p2, each the client, a random player or an equilibrium (nash) player; one <action>check|bet|call|fold</action> per move. Reward per seat: chips won / 2, −0.1 per invalid move, plus format.",
  parser: actionParser,
  argsSchema: KuhnPokerArgs,
  stateSchema: KuhnPokerState,
  // A hand has at most 3 actions; each seat may send up to 4 invalid ones (max_invalid_moves ≤ 5) before the next forfeits.
  maxTurns: 12,
  dataset: proceduralDataset(() => ({ prompt: [], answer: null, info: {} })),
  setup: (row, { seats, split, index }) => {
    const fixed = Deal.safeParse(row.info);
    const cards = fixed.success ? fixed.data.cards : dealFor(split, index);
    const assignment = KuhnPokerState.shape.seats.parse(seats ?? DEFAULT_SEATS);
    const legal = legalActions([]);
    return {
      state: { seats: assignment, cards, history: [], contributions: { p1: 1, p2: 1 }, invalid: { p1: 0, p2: 0 }, outcome: null, chips: { p1: 0, p2: 0 } },
      messages: SEATS.map((seat) => toSeat(seat, dealText(seat, cards[seat], legal))),
    };
  },
  respond: (state, message, { args, seat }) => {
    // Without a seat (a caller that predates seats) the message is the move of whoever is to act.
    const mover = seat ?? seatToAct(state.history) ?? "p1";
    if (!(SEATS as readonly string[]).includes(mover)) throw new Error(`kuhn-poker has no seat "${mover}"`);
    return playMessage(state, mover as Seat, contentText(message.content), args.max_invalid_moves);
  },
  rubric: kuhnRubric,
  seats: {
    seats: SEAT_SPECS,
    policies: kuhnPolicies,
    toPlay: (state) => (state.outcome === null ? seatToAct(state.history) : null),
    assignment: (state) => state.seats,
  },
});
