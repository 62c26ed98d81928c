import { describe, expect, it } from "vitest";
import { conformanceClient, expectError, type ConformanceOptions, type HttpReply } from "./http-conformance.js";

type Message = { role: string; content: string };

const move = (cell: number) => ({ role: "assistant", content: `<move>${cell}</move>` });

/** Cells taken so far, read from the transcript's own words ("taking cell 5", "You played 3. O played 7."). */
function takenCells(messages: Message[]): Set<number> {
  const taken = new Set<number>();
  for (const m of messages) {
    for (const hit of m.content.matchAll(/(?:taking cell|played) (\d)/g)) taken.add(Number(hit[1]));
  }
  return taken;
}

/** The n-th empty cell (0: the lowest), so two branches can choose different legal moves. */
function freeCell(messages: Message[], n = 0): number {
  const taken = takenCells(messages);
  const free = [1, 2, 3, 4, 5, 6, 7, 8, 9].filter((c) => !taken.has(c));
  const cell = free[n];
  if (cell === undefined) throw new Error("no free cell");
  return cell;
}

/**
 * Long-horizon episodes over HTTP (docs/long-horizon.md): paging, forks, sampled tokens
 * and template changes. Tic-tac-toe against the random opponent: its moves come from the
 * episode's seeded generator, so an exact replay of a fork is a real check.
 */
export function describeLongHorizonConformance(options: ConformanceOptions): void {
  const call = conformanceClient(options);
  const ttt = async (seed: number): Promise<{ id: string; messages: Message[] }> => {
    const res = await call("POST", "/v1/envs/tic-tac-toe/episodes", { seed, args: { opponent: "random" } });
    expect(res.status, res.text).toBe(201);
    return { id: res.json.episode_id, messages: res.json.messages };
  };
  const step = async (id: string, turn: number, message: unknown, sampled?: unknown): Promise<HttpReply> => {
    const res = await call("POST", `/v1/episodes/${id}/step`, { turn, message, ...(sampled ? { sampled } : {}) });
    expect(res.status, res.text).toBe(200);
    return res;
  };
  /** Plays `turns` legal moves (fewer if the game ends) and returns the transcript. */
  const play = async (id: string, opening: Message[], turns: number): Promise<{ messages: Message[]; turn: number; done: boolean }> => {
    const messages = [...opening];
    let turn = 0;
    let done = false;
    while (turn < turns && !done) {
      const m = move(freeCell(messages));
      const res = await step(id, turn, m);
      messages.push(m, ...res.json.messages);
      turn = res.json.turn;
      done = res.json.done;
    }
    return { messages, turn, done };
  };

  describe(`Long-horizon episodes: ${options.name}`, () => {
    it("pages the transcript by turn, and the pages add up to the whole", async () => {
      const { id, messages: opening } = await ttt(101);
      const played = await play(id, opening, 2);
      const whole = await call("GET", `/v1/episodes/${id}`);
      expect(whole.status).toBe(200);
      expect(whole.json).toMatchObject({ from_turn: 0, next_from_turn: null, parent: null, template_changes: [], turn: played.turn });
      expect(whole.json.messages).toEqual(played.messages);
      expect(whole.json.turns.map((t: { turn: number }) => t.turn)).toEqual([0, 1, 2].slice(0, played.turn + 1));
      expect(whole.json.turns[0]).toEqual({ turn: 0, message_count: opening.length, sampled: null, created_at: whole.json.created_at });

      const pages: Message[] = [];
      let from: number | null = 0;
      for (let i = 0; from !== null && i < 10; i++) {
        const page: HttpReply = await call("GET", `/v1/episodes/${id}?from_turn=${from}&limit=1`);
        expect(page.status).toBe(200);
        expect(page.json.from_turn).toBe(from);
        expect(page.json.turns).toHaveLength(1);
        expect(page.json.messages).toHaveLength(page.json.turns[0].message_count);
        pages.push(...page.json.messages);
        from = page.json.next_from_turn;
      }
      expect(pages).toEqual(played.messages);
      const past = await call("GET", `/v1/episodes/${id}?from_turn=${played.turn + 5}`);
      expect([past.json.messages, past.json.turns, past.json.next_from_turn]).toEqual([[], [], null]);
      expectError(await call("GET", `/v1/episodes/${id}?limit=0`), "invalid_request");
      expectError(await call("GET", `/v1/episodes/${id}?from_turn=-1`), "invalid_request");
      expectError(await call("GET", `/v1/episodes/${id}?limit=1001`), "invalid_request");
      expectError(await call("GET", `/v1/episodes/${id}?from_turn=x`), "invalid_request");
    });

    it("forks from a turn: shared prefix, exact replay with the same message, independent branches", async () => {
      const { id: parent, messages: opening } = await ttt(202);
      const played = await play(parent, opening, 2);
      expect(played.turn).toBe(2);
      const before = (await call("GET", `/v1/episodes/${parent}`)).json;
      const fork = await call("POST", `/v1/episodes/${parent}/fork`, { turn: 1, n: 2 });
      expect(fork.status, fork.text).toBe(201);
      expect(fork.json).toMatchObject({ parent: { episode_id: parent, turn: 1 }, turn: 1, max_turns: 10, tools: [] });
      const [a, b] = fork.json.episodes.map((e: { episode_id: string }) => e.episode_id) as [string, string];
      expect(new Set([parent, a, b]).size).toBe(3);

      // The prefix: the parent's turns 0 and 1, read through the fork.
      const atFork = (await call("GET", `/v1/episodes/${a}`)).json;
      const prefixLength = before.turns[0].message_count + before.turns[1].message_count;
      expect(atFork).toMatchObject({ turn: 1, status: "active", parent: { episode_id: parent, turn: 1 }, seed: 202 });
      expect(atFork.messages).toEqual(played.messages.slice(0, prefixLength));

      // The same message the parent sent at turn 1 gives the same reply: same seed, same state.
      const parentTurn2 = played.messages.slice(prefixLength);
      const replayed = await step(a, 1, parentTurn2[0]);
      expect(replayed.json.messages).toEqual(parentTurn2.slice(1));
      expect((await call("GET", `/v1/episodes/${a}`)).json.messages).toEqual(played.messages);

      // Another move on the other branch; the parent and the first branch do not change.
      const other = move(freeCell(played.messages.slice(0, prefixLength), 1));
      expect(other).not.toEqual(parentTurn2[0]);
      const branched = await step(b, 1, other);
      expect(branched.json.turn).toBe(2);
      const bTranscript = (await call("GET", `/v1/episodes/${b}`)).json.messages;
      expect(bTranscript.slice(0, prefixLength)).toEqual(played.messages.slice(0, prefixLength));
      expect(bTranscript[prefixLength]).toEqual(other);
      expect((await call("GET", `/v1/episodes/${parent}`)).json.messages).toEqual(before.messages);

      // A retry on the fork of a step it took is answered from its own rows; a step of the prefix was never its own.
      expect((await call("POST", `/v1/episodes/${a}/step`, { turn: 1, message: parentTurn2[0] })).text).toBe(replayed.text);
      expectError(await call("POST", `/v1/episodes/${a}/step`, { turn: 0, message: played.messages[opening.length] }), "turn_conflict");

      // Forks of forks: the branch's own turn 2 and the parent's prefix, with no copy.
      const grand = await call("POST", `/v1/episodes/${b}/fork`, {});
      expect(grand.status, grand.text).toBe(201);
      expect(grand.json).toMatchObject({ parent: { episode_id: b, turn: 2 }, turn: 2 });
      const g = grand.json.episodes[0].episode_id as string;
      expect((await call("GET", `/v1/episodes/${g}`)).json.messages).toEqual(bTranscript);
      const early = await call("POST", `/v1/episodes/${b}/fork`, { turn: 0 });
      expect((await call("GET", `/v1/episodes/${early.json.episodes[0].episode_id}`)).json.messages).toEqual(opening);

      // Scoring a fork scores its whole transcript, prefix included.
      const score = await call("POST", `/v1/episodes/${a}/score`);
      expect(score.status).toBe(200);
      expect(score.json.score.metrics.turns).toBe(2);
    });

    it("lists an episode's forks page by page: fork turn, status, reward; not its grandchildren", async () => {
      const { id, messages: opening } = await ttt(404);
      await play(id, opening, 1);
      const made: string[] = [];
      for (const body of [{ turn: 1, n: 3 }, { turn: 0, n: 2 }]) {
        const fork = await call("POST", `/v1/episodes/${id}/fork`, body);
        expect(fork.status, fork.text).toBe(201);
        made.push(...fork.json.episodes.map((e: { episode_id: string }) => e.episode_id));
      }
      const scored = made[0] as string;
      expect((await call("POST", `/v1/episodes/${scored}/score`)).status).toBe(200);
      const grandchild = (await call("POST", `/v1/episodes/${made[1]}/fork`, {})).json.episodes[0].episode_id as string;

      const forks: { episode_id: string; fork_turn: number; turn: number; status: string; reward: number | null }[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page: HttpReply = await call("GET", `/v1/episodes/${id}/forks?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
        expect(page.status, page.text).toBe(200);
        expect(page.json.episode_id).toBe(id);
        expect(page.json.forks.length).toBeLessThanOrEqual(2);
        forks.push(...page.json.forks);
        cursor = page.json.next_cursor;
        pages++;
      } while (cursor !== null && pages < 10);
      expect(pages).toBe(3);
      expect(forks.map((f) => f.episode_id).sort()).toEqual([...made].sort());
      expect(forks.map((f) => f.fork_turn).sort()).toEqual([0, 0, 1, 1, 1]);
      expect(forks.find((f) => f.episode_id === scored)).toMatchObject({ fork_turn: 1, turn: 1, status: "done", reward: expect.any(Number) });
      expect(forks.filter((f) => f.episode_id !== scored).every((f) => f.status === "active" && f.reward === null)).toBe(true);
      const ofChild = (await call("GET", `/v1/episodes/${made[1]}/forks`)).json;
      expect([ofChild.forks.map((f: { episode_id: string }) => f.episode_id), ofChild.next_cursor]).toEqual([[grandchild], null]);

      expectError(await call("GET", "/v1/episodes/ep_nope/forks"), "episode_not_found");
      expectError(await call("GET", `/v1/episodes/${id}/forks?limit=0`), "invalid_request");
      expectError(await call("GET", `/v1/episodes/${id}/forks?limit=201`), "invalid_request");
      expectError(await call("GET", `/v1/episodes/${id}/forks?cursor=bm90LWEtY3Vyc29y`), "invalid_request");
    });

    it("makes a fork idempotent with an Idempotency-Key and bounds what a fork may ask", async () => {
      const { id, messages: opening } = await ttt(303);
      await play(id, opening, 1);
      const headers = { "idempotency-key": `fork-${id}` };
      const first = await call("POST", `/v1/episodes/${id}/fork`, { n: 3 }, { headers });
      const again = await call("POST", `/v1/episodes/${id}/fork`, { n: 3 }, { headers });
      expect([first.status, again.status]).toEqual([201, 201]);
      expect(again.json).toEqual(first.json);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expectError(await call("POST", `/v1/episodes/${id}/fork`, { n: 2 }, { headers }), "idempotency_key_reused");
      // The parent moves on: the same request (no turn named) is still the same fork, from where it was made.
      const cell = freeCell((await call("GET", `/v1/episodes/${id}`)).json.messages);
      await step(id, 1, move(cell));
      const later = await call("POST", `/v1/episodes/${id}/fork`, { n: 3 }, { headers });
      expect([later.status, later.json]).toEqual([201, first.json]);

      expectError(await call("POST", `/v1/episodes/${id}/fork`, { n: 65 }), "invalid_request");
      expectError(await call("POST", `/v1/episodes/${id}/fork`, { n: 0 }), "invalid_request");
      expectError(await call("POST", `/v1/episodes/${id}/fork`, { turn: -1 }), "invalid_request");
      expectError(await call("POST", `/v1/episodes/${id}/fork`, { turn: 3 }), "turn_conflict");
      expectError(await call("POST", `/v1/episodes/${id}/fork`, { seed: 1 }), "invalid_request");
      expectError(await call("POST", "/v1/episodes/ep_nope/fork", {}), "episode_not_found");

      // A turn the environment ended the episode with has nothing to fork.
      const single = await call("POST", "/v1/envs/reverse-text/episodes", { index: 0 });
      await step(single.json.episode_id, 0, { role: "assistant", content: "<answer>x</answer>" });
      expectError(await call("POST", `/v1/episodes/${single.json.episode_id}/fork`, {}), "episode_done");
      const fromStart = await call("POST", `/v1/episodes/${single.json.episode_id}/fork`, { turn: 0 });
      expect(fromStart.status, fromStart.text).toBe(201);
    });

    it("stores sampled tokens per turn, returns them, and reports a change of chat template", async () => {
      const { id, messages: opening } = await ttt(404);
      const s1 = { token_ids: [27, 3266, 29, 20], logprobs: [-0.5, -0.01, -0.25, -1.75], template_hash: "sha256:aaaa" };
      const first = await step(id, 0, move(freeCell(opening)), s1);
      expect(first.json).not.toHaveProperty("template_change");
      const messages = [...opening, move(freeCell(opening)), ...first.json.messages];
      const s2 = { token_ids: [27, 3266, 29, 21], template_hash: "sha256:bbbb" };
      const second = await step(id, 1, move(freeCell(messages)), s2);
      expect(second.json.template_change).toEqual({ turn: 2, from: "sha256:aaaa", to: "sha256:bbbb" });

      const episode = (await call("GET", `/v1/episodes/${id}`)).json;
      expect(episode.turns.map((t: { sampled: unknown }) => t.sampled)).toEqual([null, s1, s2]);
      expect(episode.template_changes).toEqual([{ turn: 2, from: "sha256:aaaa", to: "sha256:bbbb" }]);

      // A fork keeps the hash in effect at its turn, and the changes up to it.
      const fork = (await call("POST", `/v1/episodes/${id}/fork`, { turn: 1 })).json.episodes[0].episode_id as string;
      const forked = (await call("GET", `/v1/episodes/${fork}`)).json;
      expect([forked.template_changes, forked.turns.map((t: { sampled: unknown }) => t.sampled)]).toEqual([[], [null, s1]]);

      const mismatched = await call("POST", `/v1/episodes/${fork}/step`, { turn: 1, message: move(5), sampled: { token_ids: [1, 2], logprobs: [-1], template_hash: "h" } });
      expectError(mismatched, "invalid_request");
      expectError(await call("POST", `/v1/episodes/${fork}/step`, { turn: 1, message: move(5), sampled: { token_ids: [-1], template_hash: "h" } }), "invalid_request");
      expectError(await call("POST", `/v1/episodes/${fork}/step`, { turn: 1, message: move(5), sampled: { token_ids: [1], template_hash: "has space" } }), "invalid_request");
      expectError(await call("POST", `/v1/episodes/${fork}/step`, { turn: 1, message: move(5), sampled: { token_ids: [1], template_hash: "h", extra: 1 } }), "invalid_request");
    });
  });
}
