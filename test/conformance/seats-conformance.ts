import { describe, expect, it } from "vitest";
import { conformanceClient, expectError, type ConformanceOptions } from "./http-conformance.js";

const move = (cell: number, think = "") => ({ role: "assistant", content: `${think}<move>${cell}</move>` });

/**
 * Seats over HTTP (docs/multi-agent.md), the same on every runtime and store: who plays
 * each seat, whose turn it is, what each seat is shown, per-seat retries, views and
 * scores, and the stable codes of bad seat requests.
 */
export function describeSeatsConformance(options: ConformanceOptions): void {
  const call = conformanceClient(options);
  const reset = async (body: Record<string, unknown> = {}) => {
    const res = await call("POST", "/v1/envs/tic-tac-toe-2p/episodes", body);
    expect(res.status, res.text).toBe(201);
    return res.json;
  };
  const step = (id: string, turn: number, seat: string | undefined, message: unknown) => call("POST", `/v1/episodes/${id}/step`, { turn, message, ...(seat === undefined ? {} : { seat }) });

  describe(`seats: ${options.name}`, () => {
    it("plays self-play by default: each reply is what the seat to play sees next, without another seat's text", async () => {
      const ep = await reset({ seed: 7 });
      expect(ep.to_play).toBe("x");
      expect(ep.messages.map((m: { role: string }) => m.role)).toEqual(["system", "user"]);
      expect(ep.messages.some((m: { name?: string }) => m.name !== undefined)).toBe(false);
      expect(ep.messages[1].content).toMatch(/You play X/);

      const first = await step(ep.episode_id, 0, "x", move(5, "<think>my secret plan</think>"));
      expect(first.status, first.text).toBe(200);
      expect(first.json.to_play).toBe("o");
      // o's first reply holds its whole opening, then x's move: never x's text.
      expect(first.json.messages.map((m: { content: string }) => m.content)).toEqual([expect.stringMatching(/playing tic-tac-toe as O/), expect.stringMatching(/You play O/), expect.stringMatching(/X played 5/)]);
      expect(first.text).not.toMatch(/secret plan/);

      const o = await call("GET", `/v1/episodes/${ep.episode_id}?seat=o`);
      expect(o.status, o.text).toBe(200);
      expect(o.json.seat).toBe("o");
      expect(o.json.to_play).toBe("o");
      expect(o.json.seats).toEqual({ x: "client", o: "client" });
      expect(o.text).not.toMatch(/secret plan/);
      const x = await call("GET", `/v1/episodes/${ep.episode_id}?seat=x`);
      expect(x.json.messages.map((m: { role: string }) => m.role)).toEqual(["system", "user", "assistant"]);
      expect(x.json.messages[2].content).toMatch(/secret plan/);
      expect(x.json.turns.map((t: { message_count: number }) => t.message_count)).toEqual([2, 1]);
    });

    it("refuses a step out of turn (409 not_your_turn, with to_play) and replays a seat's retry byte for byte", async () => {
      const ep = await reset({ seed: 8 });
      const early = await step(ep.episode_id, 0, "o", move(1));
      expectError(early, "not_your_turn");
      expect(early.json.error.details).toMatchObject({ to_play: "x", seat: "o" });
      const first = await step(ep.episode_id, 0, "x", move(1));
      const again = await step(ep.episode_id, 0, "x", move(1));
      expect(again.status).toBe(200);
      expect(again.text).toBe(first.text);
      // The same turn taken by the other seat, or with another move, is a conflict.
      expectError(await step(ep.episode_id, 0, "o", move(1)), "turn_conflict");
      expectError(await step(ep.episode_id, 0, "x", move(2)), "turn_conflict");
    });

    it("plays a game to the end: the whole log after it, and a score per seat", async () => {
      const ep = await reset({ seed: 9 });
      const id = ep.episode_id;
      const whileLive = await call("GET", `/v1/episodes/${id}`);
      expectError(whileLive, "seat_required");
      let turn = 0;
      let last;
      for (const [seat, cell] of [["x", 1], ["o", 4], ["x", 2], ["o", 5], ["x", 3]] as const) {
        last = await step(id, turn, seat, move(cell));
        expect(last.status, last.text).toBe(200);
        turn = last.json.turn;
      }
      expect(last?.json).toMatchObject({ done: true, to_play: null, stop_reason: "game_over" });
      expect(last?.json.messages.at(-1).content).toMatch(/You win/);
      const whole = await call("GET", `/v1/episodes/${id}`);
      expect(whole.status, whole.text).toBe(200);
      expect(new Set(whole.json.messages.map((m: { name: string }) => m.name))).toEqual(new Set(["x", "o"]));
      const score = await call("POST", `/v1/episodes/${id}/score`);
      expect(score.status, score.text).toBe(200);
      expect(score.json.score.seats.x.metrics).toMatchObject({ win: 1, moves: 3 });
      expect(score.json.score.seats.o.metrics).toMatchObject({ loss: 1, moves: 2 });
      expect(score.json.score.reward).toBe(score.json.score.seats.x.reward);
    });

    it("forks a self-play game mid-way: each child goes on from the seat to play, its views sharing the parent's prefix", async () => {
      const ep = await reset({ seed: 12 });
      await step(ep.episode_id, 0, "x", move(5));
      const fork = await call("POST", `/v1/episodes/${ep.episode_id}/fork`, { turn: 1, n: 2 });
      expect(fork.status, fork.text).toBe(201);
      const [a, b] = fork.json.episodes.map((e: { episode_id: string }) => e.episode_id);
      const early = await step(a, 1, "x", move(1));
      expectError(early, "not_your_turn");
      expect((await step(a, 1, "o", move(1))).json.messages.at(-1).content).toMatch(/O played 1/);
      expect((await step(b, 1, "o", move(9))).json.messages.at(-1).content).toMatch(/O played 9/);
      const view = await call("GET", `/v1/episodes/${b}?seat=o`);
      expect(view.json.messages.map((m: { role: string }) => m.role)).toEqual(["system", "user", "user", "assistant"]);
      expect(view.json.messages[2].content).toMatch(/X played 5/);
    });

    it("plays the environment's seat itself: a client against minimax steps without naming its seat", async () => {
      const ep = await reset({ seed: 10, seats: { x: "minimax" } });
      expect(ep.to_play).toBe("o");
      expect(ep.messages.at(-1).content).toMatch(/X played \d/);
      const wrong = await step(ep.episode_id, 0, "x", move(1));
      expectError(wrong, "seat_not_client");
      // The environment's seat's view waits for the end of the game: it may hold what the client must not see.
      expectError(await call("GET", `/v1/episodes/${ep.episode_id}?seat=x`), "seat_not_client");
      const free = [1, 2, 3, 4, 5, 6, 7, 8, 9].filter((c) => !new RegExp(`X played ${c}\\b`).test(ep.messages.at(-1).content));
      const res = await step(ep.episode_id, 0, undefined, move(free[0] as number));
      expect(res.status, res.text).toBe(200);
      expect(["o", null]).toContain(res.json.to_play);
    });

    it("keeps a poker hand hidden: p2's replies, view and the examples listing never show p1's card or text", async () => {
      for (const index of [0, 1, 2, 3, 4, 5]) {
        const res = await call("POST", "/v1/envs/kuhn-poker/episodes", { index, seats: { p2: "client" } });
        expect(res.status, res.text).toBe(201);
        const id = res.json.episode_id;
        const own = (res.json.messages.at(-1).content as string).match(/Your card is the (\w+)/)?.[1];
        const bet = await step(id, 0, "p1", { role: "assistant", content: `<think>I hold the ${own}, so I bet</think><action>bet</action>` });
        expect(bet.status, bet.text).toBe(200);
        expect(bet.json.to_play).toBe("p2");
        const p2View = await call("GET", `/v1/episodes/${id}?seat=p2`);
        const shownToP2 = [...bet.json.messages, ...p2View.json.messages].filter((m: { role: string }) => m.role !== "system");
        const examples = await call("GET", `/v1/envs/kuhn-poker/examples?offset=${index}&limit=1`);
        const fold = await step(id, 1, "p2", { role: "assistant", content: "<action>fold</action>" });
        expect(fold.json.done).toBe(true);
        // The hand ended on a fold: neither card is shown, so p2 never learns p1's.
        const p2Card = (shownToP2.find((m: { content: string }) => /Your card is/.test(m.content)).content as string).match(/Your card is the (\w+)/)?.[1];
        expect(p2Card).not.toBe(own);
        for (const text of [JSON.stringify(shownToP2), JSON.stringify(fold.json.messages)]) {
          expect(text).not.toMatch(new RegExp(`\\b${own}\\b`));
          expect(text).not.toMatch(/I hold/);
        }
        // The listing shows the rules (every card's name) but no deal.
        expect(examples.status, examples.text).toBe(200);
        expect(examples.json.examples[0].info).toEqual({});
        expect(examples.text).not.toMatch(/Your card/);
      }
    });

    it("lists an environment's seats and policies", async () => {
      const info = await call("GET", "/v1/envs/tic-tac-toe-2p");
      expect(info.status, info.text).toBe(200);
      expect(info.json.seats.map((s: { name: string }) => s.name)).toEqual(["x", "o"]);
      expect(info.json.seats[0]).toMatchObject({ players: ["client", "minimax", "random"], default: "client", trainable: true });
      expect(Object.keys(info.json.policies).sort()).toEqual(["minimax", "random"]);
      const single = await call("GET", "/v1/envs/reverse-text");
      expect(single.json).not.toHaveProperty("seats");
    });

    it("answers bad seat requests with stable codes, and leaves one-player episodes as they were", async () => {
      expectError(await call("POST", "/v1/envs/tic-tac-toe-2p/episodes", { seats: { z: "client" } }), "unknown_seat");
      expectError(await call("POST", "/v1/envs/tic-tac-toe-2p/episodes", { seats: { x: "alphazero" } }), "unknown_policy");
      expectError(await call("POST", "/v1/envs/tic-tac-toe-2p/episodes", { seats: { x: "minimax", o: "random" } }), "no_client_seat");
      expectError(await call("POST", "/v1/envs/reverse-text/episodes", { seats: { x: "client" } }), "seats_unsupported");
      const ep = await reset({ seed: 11 });
      expectError(await step(ep.episode_id, 0, undefined, move(1)), "seat_required");
      expectError(await step(ep.episode_id, 0, "z", move(1)), "unknown_seat");
      expectError(await call("GET", `/v1/episodes/${ep.episode_id}?seat=z`), "unknown_seat");

      const single = await call("POST", "/v1/envs/reverse-text/episodes", { index: 0 });
      expect(single.status).toBe(201);
      expect(single.json).not.toHaveProperty("to_play");
      expectError(await step(single.json.episode_id, 0, "x", { role: "assistant", content: "<answer>x</answer>" }), "seats_unsupported");
      expectError(await call("GET", `/v1/episodes/${single.json.episode_id}?seat=x`), "seats_unsupported");
      const plain = await step(single.json.episode_id, 0, undefined, { role: "assistant", content: "<answer>x</answer>" });
      expect(plain.status).toBe(200);
      expect(plain.json).not.toHaveProperty("to_play");
    });
  });
}
