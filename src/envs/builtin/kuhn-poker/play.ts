import type { ChatMessage } from "../../../protocol/index.js";
import { XmlParser } from "../../parsers/xml-parser.js";
import { toSeat } from "../../seats.js";
import type { RespondResult } from "../../types.js";
import { ACTIONS, contributions, ending, legalActions, opponentOf, payoff, seatToAct, type Action, type EndKind, type Seat } from "./game.js";
import { invalidReason, invalidText, opponentActed, resultText, youActed, yourMove } from "./messages.js";
import type { KuhnPokerState } from "./state.js";

export const actionParser = new XmlParser({ fields: ["think", "action"], answerField: "action", optional: ["think"] });

/** The longest piece of a seat's own text echoed back to it in an invalid-move message. */
const ECHO_LIMIT = 24;

const isAction = (word: string): word is Action => (ACTIONS as readonly string[]).includes(word);

/** The action a message names (case and spaces ignored), or what it named instead, or nothing. */
export function readAction(text: string): { action: Action } | { shown: string | undefined } {
  const raw = actionParser.parse(text).action;
  if (raw === undefined || raw === "") return { shown: undefined };
  const word = raw.toLowerCase();
  if (isAction(word)) return { action: word };
  return { shown: raw.length > ECHO_LIMIT ? `${raw.slice(0, ECHO_LIMIT)}…` : raw };
}

function finish(state: KuhnPokerState, kind: EndKind, winner: Seat, history: KuhnPokerState["history"]): KuhnPokerState {
  return { ...state, history, contributions: contributions(history), outcome: { kind, winner }, chips: payoff(history, winner) };
}

const result = (state: KuhnPokerState, seat: Seat): string => {
  const outcome = state.outcome as NonNullable<KuhnPokerState["outcome"]>;
  return resultText(seat, outcome.kind, outcome.winner === seat, state.chips[seat], state.cards);
};

/**
 * `seat`'s message applied to the hand: its action played, or counted as invalid (too many
 * forfeit the ante). Every reply names its seat, and the opponent learns only the action word.
 */
export function playMessage(state: KuhnPokerState, seat: Seat, text: string, maxInvalid: number): RespondResult<KuhnPokerState> {
  const toAct = seatToAct(state.history);
  if (state.outcome !== null || toAct === null) throw new Error("the hand is over; no more actions are taken");
  if (seat !== toAct) throw new Error(`it is ${toAct}'s turn, not ${seat}'s`);
  const opp = opponentOf(seat);
  const legal = legalActions(state.history);
  const read = readAction(text);
  if (!("action" in read) || !legal.includes(read.action)) {
    const shown = "action" in read ? read.action : read.shown;
    const count = state.invalid[seat] + 1;
    const invalid = { ...state.invalid, [seat]: count };
    if (count < maxInvalid) return { state: { ...state, invalid }, messages: [toSeat(seat, invalidText(shown, legal, count, maxInvalid))] };
    const over = finish({ ...state, invalid }, "forfeit", opp, state.history);
    return {
      state: over,
      messages: [toSeat(seat, `${invalidReason(shown)} ${result(over, seat)}`), toSeat(opp, result(over, opp))],
      done: true,
      stopReason: "too_many_invalid_moves",
    };
  }
  const history = [...state.history, { seat, action: read.action }];
  const end = ending(history, state.cards);
  if (end) {
    const over = finish(state, end.kind, end.winner, history);
    const messages: ChatMessage[] = [toSeat(seat, `${youActed(read.action)} ${result(over, seat)}`), toSeat(opp, `${opponentActed(read.action)} ${result(over, opp)}`)];
    return { state: over, messages, done: true, stopReason: "game_over" };
  }
  return {
    state: { ...state, history, contributions: contributions(history) },
    messages: [toSeat(seat, youActed(read.action)), toSeat(opp, `${opponentActed(read.action)} ${yourMove(legalActions(history))}`)],
  };
}
