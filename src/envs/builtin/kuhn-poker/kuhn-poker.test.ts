import { describe, expect, it } from "vitest";
import { contentText, type ChatMessage } from "../../../protocol/index.js";
import { scoreEpisode, startEpisode, stepEpisode, type EpisodeSnapshot } from "../../engine.js";
import { createRng, type Rng } from "../../rng.js";
import { scoreRubric } from "../../rubric.js";
import { seatView, toSeat } from "../../seats.js";
import { CARD_NAMES, CARDS, ending, facingBet, legalActions, line, payoff, seatToAct, type Action, type Card, type Hands, type Move, type Seat } from "./game.js";
import { kuhnPoker } from "./index.js";
import { systemPrompt } from "./messages.js";
import { actionParser, playMessage } from "./play.js";
import { kuhnPolicies } from "./policies.js";
import { KuhnPokerArgs, type KuhnPokerState } from "./state.js";
import { nashAggression } from "./strategy.js";

const DEALS: Hands[] = CARDS.flatMap((p1) => CARDS.filter((p2) => p2 !== p1).map((p2) => ({ p1, p2 })));
const LINES: Action[][] = [["check", "check"], ["check", "bet", "call"], ["check", "bet", "fold"], ["bet", "call"], ["bet", "fold"]];
const ARGS = KuhnPokerArgs.parse({});
const beats = (a: Card, b: Card): boolean => CARDS.indexOf(a) > CARDS.indexOf(b);

/** The moves of a line of actions, seats alternating from p1. */
const moves = (actions: readonly Action[]): Move[] => actions.map((action, i) => ({ seat: i % 2 === 0 ? "p1" : "p2", action }));

async function setupHand(cards: Hands, seats: Record<Seat, string> = { p1: "client", p2: "client" }): Promise<{ state: KuhnPokerState; messages: ChatMessage[] }> {
  const setup = await kuhnPoker.setup({ prompt: [], answer: null, info: { cards } }, { args: ARGS, rng: createRng(0), split: "train", index: 0, seats });
  return { state: setup.state, messages: setup.messages ?? [] };
}

/** Plays `actions` (each the text of the seat to act) through respond's rules; returns the final state and every reply. */
async function playHand(cards: Hands, texts: readonly string[], maxInvalid = 3): Promise<{ state: KuhnPokerState; replies: ChatMessage[]; done: boolean; stopReason?: string }> {
  let { state } = await setupHand(cards);
  const replies: ChatMessage[] = [];
  for (const text of texts) {
    const seat = seatToAct(state.history) as Seat;
    const r = playMessage(state, seat, text, maxInvalid);
    state = r.state;
    replies.push(...(r.messages ?? []));
    if (r.done) return { state, replies, done: true, ...(r.stopReason ? { stopReason: r.stopReason } : {}) };
  }
  return { state, replies, done: false };
}

const act = (a: string) => `<action>${a}</action>`;
const textsOf = (messages: readonly ChatMessage[], seat: Seat) => messages.filter((m) => m.name === seat).map((m) => contentText(m.content));

describe("kuhn poker rules", () => {
  it("says who acts and what is legal after every prefix of every line", () => {
    expect([seatToAct([]), legalActions([])]).toEqual(["p1", ["check", "bet"]]);
    expect([seatToAct(moves(["check"])), legalActions(moves(["check"]))]).toEqual(["p2", ["check", "bet"]]);
    expect([seatToAct(moves(["bet"])), legalActions(moves(["bet"]))]).toEqual(["p2", ["call", "fold"]]);
    expect([seatToAct(moves(["check", "bet"])), legalActions(moves(["check", "bet"]))]).toEqual(["p1", ["call", "fold"]]);
    for (const l of LINES) expect(seatToAct(moves(l))).toBeNull();
  });

  it("pays every line of every deal: ±1 for check-check and folds, ±2 for a called bet, zero-sum", () => {
    for (const hands of DEALS) {
      const high: Seat = beats(hands.p1, hands.p2) ? "p1" : "p2";
      const expected: Record<string, { kind: string; winner: Seat; p1: number }> = {
        "check,check": { kind: "showdown", winner: high, p1: high === "p1" ? 1 : -1 },
        "check,bet,call": { kind: "showdown", winner: high, p1: high === "p1" ? 2 : -2 },
        "check,bet,fold": { kind: "fold", winner: "p2", p1: -1 },
        "bet,call": { kind: "showdown", winner: high, p1: high === "p1" ? 2 : -2 },
        "bet,fold": { kind: "fold", winner: "p1", p1: 1 },
      };
      for (const l of LINES) {
        const history = moves(l);
        const want = expected[line(history)]!;
        const end = ending(history, hands)!;
        expect({ kind: end.kind, winner: end.winner }, `${hands.p1}${hands.p2} ${line(history)}`).toEqual({ kind: want.kind, winner: want.winner });
        expect(payoff(history, end.winner)).toEqual({ p1: want.p1, p2: -want.p1 });
      }
    }
  });

  it("plays a hand through respond's rules: check, check, showdown ±1 with both cards shown", async () => {
    const { state, replies, done, stopReason } = await playHand({ p1: "K", p2: "J" }, [act("check"), act("check")]);
    expect([done, stopReason, state.outcome, state.chips]).toEqual([true, "game_over", { kind: "showdown", winner: "p1" }, { p1: 1, p2: -1 }]);
    expect(textsOf(replies, "p1")).toEqual(["You checked.", "Your opponent checked. Showdown: you have the King, your opponent has the Jack. You win 1 chip."]);
    expect(textsOf(replies, "p2")).toEqual(["Your opponent checked. Your move: check or bet.", "You checked. Showdown: you have the Jack, your opponent has the King. You lose 1 chip."]);
  });

  it("check, bet, call: ±2 to the higher card; bet, fold: +1 to the bettor and no card shown", async () => {
    const called = await playHand({ p1: "Q", p2: "K" }, [act("check"), act("bet"), act("call")]);
    expect([called.state.chips, called.state.contributions, called.state.outcome]).toEqual([{ p1: -2, p2: 2 }, { p1: 2, p2: 2 }, { kind: "showdown", winner: "p2" }]);
    expect(textsOf(called.replies, "p1")).toContain("Your opponent bet 1 chip. Your move: call or fold.");
    const folded = await playHand({ p1: "J", p2: "Q" }, [act("bet"), act("fold")]);
    expect([folded.state.chips, folded.state.outcome]).toEqual([{ p1: 1, p2: -1 }, { kind: "fold", winner: "p1" }]);
    expect(textsOf(folded.replies, "p1")).toEqual(["You bet 1 chip.", "Your opponent folded. You win 1 chip."]);
    expect(textsOf(folded.replies, "p2").join("\n")).not.toMatch(/Jack/);
  });

  it("counts an invalid action for its sender only, then forfeits the ante at max_invalid_moves", async () => {
    const r = await playHand({ p1: "K", p2: "Q" }, [act("call"), "I bet!", act("Raise"), act("BET")], 3);
    // The opponent hears nothing of the invalid moves, only of the forfeit.
    expect(textsOf(r.replies, "p2")).toEqual(["Your opponent made too many invalid moves and forfeits. You win 1 chip."]);
    expect(textsOf(r.replies, "p1")).toEqual([
      '"call" is not an action you can take now. Reply with <action>check</action> or <action>bet</action>. (Invalid moves: 1 of 3 allowed.) Your move: check or bet.',
      "I could not find an action in <action>…</action>. Reply with <action>check</action> or <action>bet</action>. (Invalid moves: 2 of 3 allowed.) Your move: check or bet.",
      '"Raise" is not an action you can take now. That is too many invalid moves: you forfeit. You lose 1 chip.',
    ]);
    expect([r.done, r.stopReason, r.state.outcome, r.state.chips, r.state.invalid]).toEqual([true, "too_many_invalid_moves", { kind: "forfeit", winner: "p2" }, { p1: -1, p2: 1 }, { p1: 3, p2: 0 }]);
  });

  it("forfeits facing a bet for the ante only, and tells the winner without naming a card", async () => {
    const r = await playHand({ p1: "K", p2: "Q" }, [act("bet"), act("check")], 1);
    expect([r.state.outcome, r.state.chips]).toEqual([{ kind: "forfeit", winner: "p1" }, { p1: 1, p2: -1 }]);
    expect(textsOf(r.replies, "p1").at(-1)).toBe("Your opponent made too many invalid moves and forfeits. You win 1 chip.");
  });

  it("accepts actions in any case, with <think> first; refuses a move out of turn or after the hand", async () => {
    const { state } = await setupHand({ p1: "J", p2: "K" });
    expect(playMessage(state, "p1", "<think>hmm</think>\n<action> Check </action>", 3).state.history).toEqual([{ seat: "p1", action: "check" }]);
    expect(() => playMessage(state, "p2", act("bet"), 3)).toThrow(/p1's turn/);
    const over = await playHand({ p1: "J", p2: "K" }, [act("bet"), act("call")]);
    expect(() => playMessage(over.state, "p1", act("bet"), 3)).toThrow(/over/);
  });
});

describe("kuhn poker policies", () => {
  /** Every decision point: seat, card, history. */
  const SPOTS: { seat: Seat; history: Move[] }[] = [
    { seat: "p1", history: [] },
    { seat: "p2", history: moves(["check"]) },
    { seat: "p2", history: moves(["bet"]) },
    { seat: "p1", history: moves(["check", "bet"]) },
  ];

  async function stateAt(seat: Seat, card: Card, history: Move[]): Promise<KuhnPokerState> {
    const other = CARDS.find((c) => c !== card) as Card;
    const { state } = await setupHand(seat === "p1" ? { p1: card, p2: other } : { p1: other, p2: card });
    return { ...state, history };
  }

  const actWith = (policy: "random" | "nash", state: KuhnPokerState, seat: Seat, rng: Rng, nashAlpha: number): Action => {
    const message = kuhnPolicies[policy].act(state, { args: { ...ARGS, nash_alpha: nashAlpha }, rng, seat, turn: 0, view: [], task: { prompt: [] } }) as { content: string };
    return actionParser.parse(message.content).action as Action;
  };

  it("nash follows the equilibrium table (Kuhn 1950) for every α", () => {
    const a = 0.2;
    expect(["J", "Q", "K"].map((c) => nashAggression("p1", c as Card, [], a))).toEqual([0.2, 0, 0.6000000000000001]);
    expect(["J", "Q", "K"].map((c) => nashAggression("p1", c as Card, moves(["check", "bet"]), a))).toEqual([0, 0.2 + 1 / 3, 1]);
    expect(["J", "Q", "K"].map((c) => nashAggression("p2", c as Card, moves(["check"]), a))).toEqual([1 / 3, 0, 1]);
    expect(["J", "Q", "K"].map((c) => nashAggression("p2", c as Card, moves(["bet"]), a))).toEqual([0, 1 / 3, 1]);
    expect(() => nashAggression("p1", "J", [], 0.5)).toThrow(/alpha/);
  });

  it("nash's actions follow the table's frequencies over many seeded draws", async () => {
    const n = 2000;
    for (const alpha of [0, 1 / 6, 1 / 3]) {
      for (const [s, { seat, history }] of SPOTS.entries()) {
        for (const card of CARDS) {
          const state = await stateAt(seat, card, history);
          const rng = createRng(0xc0ffee, s, CARDS.indexOf(card), Math.round(alpha * 6));
          const counts = new Map<Action, number>();
          for (let i = 0; i < n; i++) {
            const a = actWith("nash", state, seat, rng, alpha);
            counts.set(a, (counts.get(a) ?? 0) + 1);
          }
          expect(legalActions(history)).toEqual(expect.arrayContaining([...counts.keys()]));
          const aggressive = (counts.get("bet") ?? 0) + (counts.get("call") ?? 0);
          const p = nashAggression(seat, card, history, alpha);
          // Five standard deviations (and exact at 0 and 1): a seeded run, so this never flakes.
          expect(Math.abs(aggressive / n - p), `${seat} ${card} after "${line(history)}", α=${alpha}`).toBeLessThanOrEqual(5 * Math.sqrt((p * (1 - p)) / n));
        }
      }
    }
  });

  it("nash is an equilibrium: p1 wins −1/18 a hand, and neither side gains by any pure deviation", () => {
    type Strategy = (seat: Seat, card: Card, history: readonly Move[]) => number;
    const value = (s1: Strategy, s2: Strategy): number => {
      const node = (hands: Hands, history: Move[]): number => {
        const end = ending(history, hands);
        if (end) return payoff(history, end.winner).p1;
        const seat = seatToAct(history) as Seat;
        const p = (seat === "p1" ? s1 : s2)(seat, hands[seat], history);
        const [hot, cold] = facingBet(history) ? (["call", "fold"] as const) : (["bet", "check"] as const);
        return p * node(hands, [...history, { seat, action: hot }]) + (1 - p) * node(hands, [...history, { seat, action: cold }]);
      };
      return DEALS.reduce((sum, hands) => sum + node(hands, []) / DEALS.length, 0);
    };
    /** The 64 pure strategies of a seat: one bit per (card, decision) information set. */
    const pure = (decisions: string[]): Strategy[] =>
      Array.from({ length: 2 ** (3 * decisions.length) }, (_, bits) => (_seat, card, history) => {
        const k = CARDS.indexOf(card) * decisions.length + decisions.indexOf(line(history));
        return (bits >> k) & 1;
      });
    const p2Nash: Strategy = (seat, card, history) => nashAggression(seat, card, history, 0);
    for (const alpha of [0, 1 / 6, 1 / 3]) {
      const p1Nash: Strategy = (seat, card, history) => nashAggression(seat, card, history, alpha);
      expect(value(p1Nash, p2Nash)).toBeCloseTo(-1 / 18, 12);
      const p1Best = Math.max(...pure(["", "check,bet"]).map((s) => value(s, p2Nash)));
      const p2Best = Math.min(...pure(["check", "bet"]).map((s) => value(p1Nash, s)));
      expect(p1Best).toBeCloseTo(-1 / 18, 12);
      expect(p2Best).toBeCloseTo(-1 / 18, 12);
    }
  });

  it("random plays only legal actions, and each of them", async () => {
    for (const { seat, history } of SPOTS) {
      const state = await stateAt(seat, "Q", history);
      const rng = createRng(7, history.length);
      const seen = new Set<Action>();
      for (let i = 0; i < 200; i++) seen.add(actWith("random", state, seat, rng, 1 / 6));
      expect([...seen].sort()).toEqual([...legalActions(history)].sort());
    }
  });
});

describe("kuhn poker environment", () => {
  it("deals from the task's index in setup, never into the row (the examples listing publishes rows), and every deal occurs", async () => {
    const seen = new Set<string>();
    for (let index = 0; index < 60; index++) {
      const row = await kuhnPoker.dataset.row("train", index);
      expect(row).toEqual({ prompt: [], answer: null, info: {} });
      const { state } = await kuhnPoker.setup(row, { args: ARGS, rng: createRng(index), split: "train", index });
      const again = await kuhnPoker.setup(row, { args: ARGS, rng: createRng(index + 1), split: "train", index });
      expect(again.state.cards).toEqual(state.cards);
      expect(state.cards.p1).not.toBe(state.cards.p2);
      seen.add(`${state.cards.p1}${state.cards.p2}`);
    }
    expect(seen.size).toBe(6);
  });

  it("sets up each seat with its own card only, p1 to move, and keeps the assignment", async () => {
    const { state, messages } = await setupHand({ p1: "K", p2: "J" }, { p1: "client", p2: "random" });
    expect(messages).toEqual([
      { role: "user", content: "Your card is the King. Your move: check or bet.", name: "p1" },
      { role: "user", content: "Your card is the Jack. Your opponent acts first.", name: "p2" },
    ]);
    expect(kuhnPoker.seats?.assignment(state)).toEqual({ p1: "client", p2: "random" });
    expect(kuhnPoker.seats?.toPlay(state)).toBe("p1");
    // Without an assignment (a caller that predates seats): the defaults.
    const bare = await kuhnPoker.setup({ prompt: [], info: { cards: { p1: "K", p2: "J" } } }, { args: ARGS, rng: createRng(0), split: "train", index: 0 });
    expect(bare.state.seats).toEqual({ p1: "client", p2: "nash" });
  });

  it("declares two seats, client vs nash by default, with system prompts that do not depend on the deal", () => {
    const seats = kuhnPoker.seats!;
    expect(seats.seats.map((s) => [s.name, s.default, s.players, s.trainable])).toEqual([
      ["p1", "client", ["client", "random", "nash"], true],
      ["p2", "nash", ["client", "random", "nash"], true],
    ]);
    expect(seats.seats[0]?.systemPrompt).toMatch(/<action>bet<\/action>/);
    expect(Object.keys(seats.policies).sort()).toEqual(["nash", "random"]);
    expect(kuhnPoker.readsHistory).toBe(true);
    expect(() => KuhnPokerArgs.parse({ nash_alpha: 0.5 })).toThrow();
    expect(KuhnPokerArgs.parse({})).toEqual({ max_invalid_moves: 3, nash_alpha: 1 / 6 });
  });

  it("scores each seat: chips/2, invalid moves, format; chips sum to zero across the seats", async () => {
    for (const hands of DEALS) {
      for (const l of LINES) {
        const texts = l.map((a, i) => (i === 0 ? `<action>x</action>` : act(a)));
        texts.splice(1, 0, act(l[0] as Action)); // p1's first message is invalid, then it plays the line.
        const { state } = await playHand(hands, texts);
        const completion = (seat: Seat): ChatMessage[] => texts.filter((_, i) => (i <= 1 ? seat === "p1" : (i % 2 === 0) === (seat === "p2"))).map((content) => ({ role: "assistant", content }));
        const score = (seat: Seat) =>
          scoreRubric(kuhnPoker.rubric, { prompt: [], completion: completion(seat), answer: null, info: { cards: hands }, state, parser: kuhnPoker.parser, task: { prompt: [] }, args: ARGS, seat });
        const [s1, s2] = await Promise.all([score("p1"), score("p2")]);
        const chips = (s: typeof s1) => s.components.find((c) => c.name === "chips")!.score;
        expect(chips(s1) + chips(s2)).toBe(0);
        expect(chips(s1)).toBe(state.chips.p1 / 2);
        expect(s1.components.map((c) => [c.name, c.weight])).toEqual([["chips", 1], ["invalid_moves", -0.1], ["format", 0.1]]);
        expect(s1.components[1]!.score).toBe(1);
        expect(s2.components[1]!.score).toBe(0);
        expect(s2.components[2]!.score).toBe(1);
        expect(s1.metrics.win! + s2.metrics.win!).toBe(1);
        expect([s1.metrics.chips, s2.metrics.chips]).toEqual([state.chips.p1, state.chips.p2]);
        expect(s1.reward).toBeCloseTo(state.chips.p1 / 2 - 0.1 + 0.1 * s1.components[2]!.score, 12);
      }
    }
  });

  it("does not score a bare completion, nor an unknown seat", async () => {
    const base = { prompt: [], completion: [], answer: null, info: {}, parser: kuhnPoker.parser, task: { prompt: [] } };
    const bare = await scoreRubric(kuhnPoker.rubric, { ...base, state: null, seat: "p1" });
    expect(bare.components[0]).toMatchObject({ name: "chips", score: 0, error: expect.stringMatching(/game state/) });
    const { state } = await setupHand({ p1: "K", p2: "J" });
    const unknown = await scoreRubric(kuhnPoker.rubric, { ...base, state, seat: "p3" });
    expect(unknown.components[0]?.error).toMatch(/no seat "p3"/);
    // Self-play with no seat named: which seat is ambiguous.
    const ambiguous = await scoreRubric(kuhnPoker.rubric, { ...base, state });
    expect(ambiguous.components[0]?.error).toMatch(/one seat at a time/);
  });

  it("never shows the opponent's card or words before a showdown", async () => {
    for (const hands of DEALS) {
      for (const l of LINES) {
        const texts = l.map((a) => `<think>I hold the ${CARD_NAMES[hands.p1]}, secret-${hands.p1}</think>${act(a)}`);
        const { state, replies } = await playHand(hands, texts);
        for (const seat of ["p1", "p2"] as const) {
          const oppCard = CARD_NAMES[hands[seat === "p1" ? "p2" : "p1"]];
          const seen = textsOf(replies, seat);
          const beforeShowdown = state.outcome?.kind === "showdown" ? seen.slice(0, -1) : seen;
          for (const text of beforeShowdown) expect(text).not.toContain(oppCard);
          for (const text of seen) expect(text).not.toMatch(/secret|I hold/);
        }
      }
    }
  });
});

describe("kuhn poker episodes (engine, seats)", () => {
  const say = (content: string) => ({ role: "assistant" as const, content });
  const stateOf = (s: EpisodeSnapshot) => s.state as KuhnPokerState;
  /** Every message of the log named for `seat`, system prompt excluded, as text. */
  const shown = (s: EpisodeSnapshot, seat: Seat) => seatView(s.messages, seat).filter((m) => m.role !== "system").map((m) => contentText(m.content));

  it("self-play by two clients: each seat opens with its prompt and own card, plays by name, and is scored zero-sum", async () => {
    const start = await startEpisode(kuhnPoker, { seed: 3, seats: { p2: "client" } });
    const { cards } = stateOf(start);
    expect(start.messages.every((m) => m.name === "p1" || m.name === "p2")).toBe(true);
    expect(seatView(start.messages, "p1")).toEqual([
      { role: "system", content: systemPrompt("p1") },
      { role: "user", content: `Your card is the ${CARD_NAMES[cards.p1]}. Your move: check or bet.` },
    ]);
    expect(seatView(start.messages, "p2").map((m) => m.role)).toEqual(["system", "user"]);
    await expect(stepEpisode(kuhnPoker, start, say(act("bet")))).rejects.toMatchObject({ code: "seat_required" });
    await expect(stepEpisode(kuhnPoker, start, say(act("bet")), { seat: "p2" })).rejects.toMatchObject({ code: "not_your_turn", details: { to_play: "p1" } });
    const bet = await stepEpisode(kuhnPoker, start, say(act("bet")), { seat: "p1" });
    expect(bet.reply).toEqual([toSeat("p1", "You bet 1 chip."), toSeat("p2", "Your opponent bet 1 chip. Your move: call or fold.")]);
    const end = (await stepEpisode(kuhnPoker, bet.snapshot, say(act("call")), { seat: "p2" })).snapshot;
    expect([end.done, end.stopReason, end.turn]).toEqual([true, "game_over", 2]);
    const high: Seat = beats(cards.p1, cards.p2) ? "p1" : "p2";
    expect(stateOf(end).chips[high]).toBe(2);
    const score = await scoreEpisode(kuhnPoker, end);
    expect(score.seats?.[high]?.reward).toBeCloseTo(1.1, 12);
    expect(score.seats?.[high === "p1" ? "p2" : "p1"]?.reward).toBeCloseTo(-0.9, 12);
    expect(score.seats?.p1?.metrics).toMatchObject({ moves: 1, chips: stateOf(end).chips.p1 });
    expect(score.reward).toBe(score.seats?.p1?.reward);
  });

  it("client vs nash by default: the equilibrium answers within the client's step, and p1's chips follow the deal", async () => {
    let total = 0;
    for (let seed = 0; seed < 40; seed++) {
      const start = await startEpisode(kuhnPoker, { seed });
      expect(stateOf(start).seats).toEqual({ p1: "client", p2: "nash" });
      // p1 always bets: nash (as p2) calls with a King, folds a Jack, calls a Queen a third of the time.
      const { snapshot: end, reply } = await stepEpisode(kuhnPoker, start, say(act("bet")));
      expect(end.done).toBe(true);
      const p2 = reply.find((m) => m.role === "assistant");
      expect(p2).toMatchObject({ name: "p2", content: expect.stringMatching(/^<action>(call|fold)<\/action>$/) });
      const { cards, chips, history } = stateOf(end);
      if (cards.p2 === "K") expect(history[1]?.action).toBe("call");
      if (cards.p2 === "J") expect(history[1]?.action).toBe("fold");
      const score = await scoreEpisode(kuhnPoker, end);
      expect(score.seats?.p1?.components[0]?.score).toBe(chips.p1 / 2);
      expect(score.seats!.p1!.metrics.chips! + score.seats!.p2!.metrics.chips!).toBe(0);
      expect(score.seats?.p2?.components[2]?.score).toBe(1);
      total += chips.p1;
    }
    expect(total).not.toBe(0);
  });

  it("nash as p1 moves at reset, so the client's p2 opens facing its action", async () => {
    const start = await startEpisode(kuhnPoker, { seed: 5, seats: { p1: "nash", p2: "client" } });
    const opened = shown(start, "p2");
    expect(opened[0]).toMatch(/^Your card is the (Jack|Queen|King)\. Your opponent acts first\.$/);
    expect(opened[1]).toMatch(/^Your opponent (checked\. Your move: check or bet|bet 1 chip\. Your move: call or fold)\.$/);
    expect(kuhnPoker.seats?.toPlay(stateOf(start))).toBe("p2");
  });

  it("hides p1's card and words from p2 until the showdown, in every deal and line", async () => {
    for (let seed = 0; seed < 30; seed++) {
      for (const l of LINES) {
        let s = await startEpisode(kuhnPoker, { seed, seats: { p2: "client" } });
        const { cards } = stateOf(s);
        for (const [i, a] of l.entries()) {
          const seat: Seat = i % 2 === 0 ? "p1" : "p2";
          const text = seat === "p1" ? `<think>I hold the ${CARD_NAMES[cards.p1]}</think><action>${a}</action>` : act(a);
          s = (await stepEpisode(kuhnPoker, s, say(text), { seat })).snapshot;
        }
        expect(s.done).toBe(true);
        const p2 = shown(s, "p2");
        const secret = `I hold the ${CARD_NAMES[cards.p1]}`;
        expect(JSON.stringify(seatView(s.messages, "p2"))).not.toContain(secret);
        expect(seatView(s.messages, "p1").some((m) => contentText(m.content).includes(secret))).toBe(true);
        const beforeShowdown = stateOf(s).outcome?.kind === "showdown" ? p2.slice(0, -1) : p2;
        for (const text of beforeShowdown) expect(text, `seed ${seed}, ${l.join(",")}`).not.toContain(CARD_NAMES[cards.p1]);
        if (stateOf(s).outcome?.kind === "showdown") expect(p2.at(-1)).toContain(`your opponent has the ${CARD_NAMES[cards.p1]}`);
      }
    }
  });

  it("shows an invalid move to its sender only, and the longest hand (4 invalid moves a seat) fits in maxTurns", async () => {
    let s = await startEpisode(kuhnPoker, { seed: 1, seats: { p2: "client" }, args: { max_invalid_moves: 5 } });
    const turns: [Seat, string][] = [];
    // Invalid moves count over the whole hand: each seat may send 4 of them before a 5th forfeits.
    for (const [seat, a, invalid] of [["p1", "check", 2], ["p2", "bet", 4], ["p1", "fold", 2]] as const) {
      for (let k = 0; k < invalid; k++) turns.push([seat, `<think>${seat} holds it</think><action>raise-${seat}</action>`]);
      turns.push([seat, act(a)]);
    }
    for (const [seat, text] of turns.slice(0, 8)) {
      const { snapshot, reply } = await stepEpisode(kuhnPoker, s, say(text), { seat });
      if (text.includes("raise")) expect(reply.every((m) => m.name === seat)).toBe(true);
      s = snapshot;
    }
    expect(JSON.stringify(seatView(s.messages, "p2"))).not.toMatch(/raise-p1|p1 holds/);
    expect(JSON.stringify(seatView(s.messages, "p1"))).not.toMatch(/raise-p2|p2 holds/);
    for (const [seat, text] of turns.slice(8)) s = (await stepEpisode(kuhnPoker, s, say(text), { seat })).snapshot;
    expect([s.done, s.stopReason, s.truncated, s.turn]).toEqual([true, "game_over", false, 11]);
    expect(stateOf(s).invalid).toEqual({ p1: 4, p2: 4 });
  });

  it("forfeits through the engine with its own stop reason, and replays exactly against random", async () => {
    let s = await startEpisode(kuhnPoker, { seed: 2, args: { max_invalid_moves: 1 } });
    s = (await stepEpisode(kuhnPoker, s, say("all in"))).snapshot;
    expect([s.done, s.stopReason, stateOf(s).chips]).toEqual([true, "too_many_invalid_moves", { p1: -1, p2: 1 }]);
    const run = async () => {
      let e = await startEpisode(kuhnPoker, { seed: 77, seats: { p2: "random" } });
      while (!e.done) e = (await stepEpisode(kuhnPoker, e, say(act(legalActions(stateOf(e).history)[0] as Action)))).snapshot;
      return e.messages;
    };
    expect(await run()).toEqual(await run());
  });
});
