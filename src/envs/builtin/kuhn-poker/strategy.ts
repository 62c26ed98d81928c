import type { Rng } from "../../rng.js";
import { facingBet, legalActions, line, type Action, type Card, type Move, type Seat } from "./game.js";

/**
 * The Nash equilibria of Kuhn poker, as H. W. Kuhn found them ("A simplified two-person
 * poker", Contributions to the Theory of Games I, 1950) and as the Wikipedia page
 * "Kuhn poker" tabulates them (section "Optimal strategy"). p1 picks α in [0, 1/3]:
 *
 * | p1 holds | first action           | after check, facing a bet |
 * |----------|------------------------|---------------------------|
 * | Jack     | bet with probability α | fold                      |
 * | Queen    | check                  | call with probability α+⅓ |
 * | King     | bet with probability 3α| call                      |
 *
 * p2's equilibrium strategy is unique:
 *
 * | p2 holds | after a check          | facing a bet              |
 * |----------|------------------------|---------------------------|
 * | Jack     | bet with probability ⅓ | fold                      |
 * | Queen    | check                  | call with probability ⅓   |
 * | King     | bet                    | call                      |
 *
 * Every α gives p1 the game's value, −1/18 chip a hand.
 */
export const NASH_ALPHA_MAX = 1 / 3;
export const DEFAULT_NASH_ALPHA = 1 / 6;

/**
 * The equilibrium probability of the aggressive action (bet, or call when facing a bet)
 * for `seat` holding `card` after `history`; the passive one (check, or fold) takes the rest.
 */
export function nashAggression(seat: Seat, card: Card, history: readonly Move[], alpha: number): number {
  if (!(alpha >= 0 && alpha <= NASH_ALPHA_MAX)) throw new RangeError(`nash alpha must be in [0, 1/3], not ${alpha}`);
  const spot = `${seat}:${line(history)}`;
  switch (spot) {
    case "p1:":
      return { J: alpha, Q: 0, K: 3 * alpha }[card];
    case "p1:check,bet":
      return { J: 0, Q: alpha + 1 / 3, K: 1 }[card];
    case "p2:check":
      return { J: 1 / 3, Q: 0, K: 1 }[card];
    case "p2:bet":
      return { J: 0, Q: 1 / 3, K: 1 }[card];
    default:
      throw new Error(`${seat} does not act after "${line(history)}"`);
  }
}

/** An equilibrium action drawn with `rng`. */
export function nashAction(seat: Seat, card: Card, history: readonly Move[], alpha: number, rng: Rng): Action {
  const aggressive = rng.next() < nashAggression(seat, card, history, alpha);
  if (facingBet(history)) return aggressive ? "call" : "fold";
  return aggressive ? "bet" : "check";
}

/** A legal action, uniformly. */
export const randomAction = (history: readonly Move[], rng: Rng): Action => rng.pick(legalActions(history));
