import { z } from "zod";
import { SEAT_NAME_PATTERN } from "../../seats.js";
import { ACTIONS, CARDS, SEATS } from "./game.js";
import { DEFAULT_NASH_ALPHA, NASH_ALPHA_MAX } from "./strategy.js";

export const KuhnPokerArgs = z
  .object({
    max_invalid_moves: z
      .number()
      .int()
      .min(1)
      .max(5)
      .default(3)
      .describe("Invalid actions (unparseable, unknown, or not legal now) a seat may make before it forfeits its ante."),
    nash_alpha: z
      .number()
      .min(0)
      .max(NASH_ALPHA_MAX)
      .default(DEFAULT_NASH_ALPHA)
      .describe("For the nash policy playing p1: how often it bets a Jack (α); it bets a King 3α of the time and calls with a Queen α+1/3. Every α in [0, 1/3] is an equilibrium."),
  })
  .strict();
export type KuhnPokerArgs = z.infer<typeof KuhnPokerArgs>;

const Card = z.enum(CARDS);
const Seat = z.enum(SEATS);
const PerSeat = <T extends z.ZodType>(value: T) => z.object({ p1: value, p2: value }).strict();
const Player = z.string().regex(SEAT_NAME_PATTERN);

export const KuhnPokerState = z
  .object({
    /** Who plays each seat ("client" or a policy), as the episode was reset with. */
    seats: PerSeat(Player),
    /** The deal. Each seat is shown only its own card until a showdown. */
    cards: PerSeat(Card),
    /** The betting so far, in order. */
    history: z.array(z.object({ seat: Seat, action: z.enum(ACTIONS) }).strict()).max(3),
    /** Chips each seat has put in the pot (ante included). */
    contributions: PerSeat(z.number().int().min(1).max(2)),
    /** Invalid actions each seat has sent. */
    invalid: PerSeat(z.number().int().min(0)),
    /** How the hand ended; null while it goes on. */
    outcome: z.object({ kind: z.enum(["showdown", "fold", "forfeit"]), winner: Seat }).strict().nullable(),
    /** Net chips won per seat once the hand is over (zero-sum); 0 and 0 until then. */
    chips: PerSeat(z.number().int().min(-2).max(2)),
  })
  .strict();
export type KuhnPokerState = z.infer<typeof KuhnPokerState>;
