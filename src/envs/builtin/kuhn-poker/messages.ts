import { CARD_NAMES, type Action, type Card, type EndKind, type Seat } from "./game.js";

/**
 * What each seat is told. Hidden information lives here: a seat is shown its own card,
 * the action words its opponent chose (never the opponent's own text, which may reason
 * about its card), and the opponent's card only at a showdown, where it is public.
 */

/** Each seat's system prompt. It does not depend on the deal, so it reveals nothing. */
export function systemPrompt(seat: Seat): string {
  const order = seat === "p1" ? "You are player 1: you act first." : "You are player 2: your opponent acts first.";
  return `You are playing Kuhn poker, a one-card game of poker for two players. ${order}

The deck has three cards, ranked Jack < Queen < King. Each player antes 1 chip and is dealt one card, which only they can see.
- With no bet to answer, you may check (put in nothing) or bet (put in 1 more chip).
- Facing a bet, you may call (match it with 1 chip) or fold (give up the pot).
- If both players check, or one bets and the other calls, the cards are shown and the higher card wins the pot: 1 chip from the opponent after two checks, 2 after a bet and a call.
- If a player folds, the other wins the pot (1 chip from the one who folded).

When it is your move, reply with one action inside <action>…</action>, for example <action>bet</action>. You may think inside <think>…</think> first. An invalid action is not played; too many of them forfeit your ante.`;
}

const cardName = (card: Card): string => `the ${CARD_NAMES[card]}`;

const chipsText = (n: number): string => `${n} chip${n === 1 ? "" : "s"}`;

/** What a seat may do now, as the end of a message handing it the move. */
export const yourMove = (legal: readonly Action[]): string => `Your move: ${legal.join(" or ")}.`;

export function dealText(seat: Seat, card: Card, legal: readonly Action[]): string {
  const you = `Your card is ${cardName(card)}.`;
  return seat === "p1" ? `${you} ${yourMove(legal)}` : `${you} Your opponent acts first.`;
}

const PAST: Record<Action, string> = { check: "checked", bet: "bet 1 chip", call: "called", fold: "folded" };

/** The acting seat's own action, confirmed. */
export const youActed = (action: Action): string => `You ${PAST[action]}.`;

/** The opponent's action, as the action word only. */
export const opponentActed = (action: Action): string => `Your opponent ${PAST[action]}.`;

/** Why a message was not played (shown to its sender only). `shown` is the action it named, shortened; undefined when it named none. */
export const invalidReason = (shown: string | undefined): string =>
  shown === undefined ? "I could not find an action in <action>…</action>." : `"${shown}" is not an action you can take now.`;

export function invalidText(shown: string | undefined, legal: readonly Action[], count: number, allowed: number): string {
  const how = legal.map((a) => `<action>${a}</action>`).join(" or ");
  return `${invalidReason(shown)} Reply with ${how}. (Invalid moves: ${count} of ${allowed} allowed.) ${yourMove(legal)}`;
}

/** The result as `seat` sees it. Cards are named only at a showdown. */
export function resultText(seat: Seat, kind: EndKind, won: boolean, chips: number, cards: Record<Seat, Card>): string {
  const amount = `You ${won ? "win" : "lose"} ${chipsText(Math.abs(chips))}.`;
  if (kind === "showdown") {
    const opp = seat === "p1" ? cards.p2 : cards.p1;
    return `Showdown: you have ${cardName(cards[seat])}, your opponent has ${cardName(opp)}. ${amount}`;
  }
  if (kind === "forfeit") return won ? `Your opponent made too many invalid moves and forfeits. ${amount}` : `That is too many invalid moves: you forfeit. ${amount}`;
  return amount;
}
