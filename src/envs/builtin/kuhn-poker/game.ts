/**
 * Kuhn poker rules (Kuhn 1950): a three-card deck (Jack < Queen < King), two players who
 * each ante 1 chip and get one card. p1 acts first. With no bet outstanding a player may
 * check or bet 1 chip; facing a bet, call or fold. Two checks, or a bet and a call, go to
 * a showdown where the higher card takes the pot; a fold gives it to the other player.
 * At most three actions: check–check, check–bet–call/fold, bet–call/fold.
 */
export const CARDS = ["J", "Q", "K"] as const;
export type Card = (typeof CARDS)[number];

export const CARD_NAMES: Record<Card, string> = { J: "Jack", Q: "Queen", K: "King" };

export const SEATS = ["p1", "p2"] as const;
export type Seat = (typeof SEATS)[number];

export const ACTIONS = ["check", "bet", "call", "fold"] as const;
export type Action = (typeof ACTIONS)[number];

export interface Move {
  seat: Seat;
  action: Action;
}

export type Hands = Record<Seat, Card>;

/** How a hand ended: cards compared, someone folded, or someone forfeited by too many invalid moves. */
export type EndKind = "showdown" | "fold" | "forfeit";

export const ANTE = 1;
export const BET = 1;

export const opponentOf = (seat: Seat): Seat => (seat === "p1" ? "p2" : "p1");

const rank = (card: Card): number => CARDS.indexOf(card);

/** True when the last action was a bet, which the next player must call or fold. */
export const facingBet = (history: readonly Move[]): boolean => history[history.length - 1]?.action === "bet";

/** What the player to act may do. */
export const legalActions = (history: readonly Move[]): Action[] => (facingBet(history) ? ["call", "fold"] : ["check", "bet"]);

/** The actions so far, joined: "" (nobody acted), "check", "bet", "check,bet", or a finished line. */
export const line = (history: readonly Move[]): string => history.map((m) => m.action).join(",");

/** The seat to act after `history`; null once the betting is over. */
export function seatToAct(history: readonly Move[]): Seat | null {
  switch (line(history)) {
    case "":
    case "check,bet":
      return "p1";
    case "check":
    case "bet":
      return "p2";
    default:
      return null;
  }
}

/** Chips each seat has put in the pot: the ante plus any bet or call. */
export function contributions(history: readonly Move[]): Record<Seat, number> {
  const out: Record<Seat, number> = { p1: ANTE, p2: ANTE };
  for (const m of history) if (m.action === "bet" || m.action === "call") out[m.seat] += BET;
  return out;
}

export const pot = (history: readonly Move[]): number => {
  const c = contributions(history);
  return c.p1 + c.p2;
};

export interface Ending {
  kind: EndKind;
  winner: Seat;
}

/** How the betting ended, or null while it goes on. */
export function ending(history: readonly Move[], hands: Hands): Ending | null {
  if (seatToAct(history) !== null) return null;
  const last = history[history.length - 1] as Move;
  if (last.action === "fold") return { kind: "fold", winner: opponentOf(last.seat) };
  return { kind: "showdown", winner: rank(hands.p1) > rank(hands.p2) ? "p1" : "p2" };
}

/** Net chips per seat once `winner` takes the pot: the loser loses what it put in. Zero-sum. */
export function payoff(history: readonly Move[], winner: Seat): Record<Seat, number> {
  const lost = contributions(history)[opponentOf(winner)];
  return winner === "p1" ? { p1: lost, p2: -lost } : { p1: -lost, p2: lost };
}

/** The deal for one task: three cards shuffled, the first to p1, the second to p2. */
export function deal(shuffle: <T>(items: readonly T[]) => T[]): Hands {
  const [p1, p2] = shuffle(CARDS) as [Card, Card, Card];
  return { p1, p2 };
}
