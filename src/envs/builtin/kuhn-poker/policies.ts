import type { AssistantMessage } from "../../../protocol/index.js";
import type { SeatPolicy } from "../../seats.js";
import { SEATS, type Action, type Seat } from "./game.js";
import type { KuhnPokerArgs, KuhnPokerState } from "./state.js";
import { nashAction, randomAction } from "./strategy.js";

const say = (action: Action): AssistantMessage => ({ role: "assistant", content: `<action>${action}</action>` });

function asSeat(seat: string): Seat {
  if (!(SEATS as readonly string[]).includes(seat)) throw new Error(`kuhn-poker has no seat "${seat}"`);
  return seat as Seat;
}

/**
 * The environment's players. Each reads only its own seat's card from the state (the
 * state holds both), so a policy is as blind to the other hand as a client is.
 */
export const kuhnPolicies: Record<"random" | "nash", SeatPolicy<KuhnPokerState, KuhnPokerArgs>> = {
  random: {
    description: "A uniformly random legal action.",
    act: (state, { rng }) => say(randomAction(state.history, rng)),
  },
  nash: {
    description: "An equilibrium strategy (Kuhn 1950): as p1 it bets a Jack with probability nash_alpha; as p2 it plays the unique equilibrium.",
    act: (state, { seat, args, rng }) => {
      const me = asSeat(seat);
      return say(nashAction(me, state.cards[me], state.history, args.nash_alpha, rng));
    },
  },
};
