import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inProcessApp } from "../../../test/support/in-process.js";
import { builtinEnvs, EnvRegistry } from "../../envs/index.js";
import { DEFAULT_CONFIG } from "../context.js";
import { EpisodeStore } from "../db/episode-store.js";
import { openNodeDatabase } from "../db/node-sqlite.js";
import { EpisodeService } from "../episodes/episode-service.js";
import { PUBLIC_TENANT } from "../tenants/keys.js";
import { OpenEnvEpisodes } from "./openenv-episodes.js";
import { OpenEnvSocketSession } from "./socket-session.js";

// Seats on the OpenEnv wire: a session plays the seat its reset names (or the only client
// seat) and is shown that seat's view only; a session of a self-play episode that names no
// seat plays them all, each step naming its seat. Sockets are driven frame by frame over a
// real service; the HTTP routes in-process.

let database: ReturnType<typeof openNodeDatabase>;
let service: EpisodeService;
let episodes: OpenEnvEpisodes;
beforeEach(() => {
  database = openNodeDatabase(":memory:");
  service = new EpisodeService(new EpisodeStore(database.db), new EnvRegistry("node", builtinEnvs), DEFAULT_CONFIG, Date.now);
  episodes = new OpenEnvEpisodes(service);
});
afterEach(() => database.close());

const viewer = { name: PUBLIC_TENANT, admin: false };

/** One socket: each frame sent is answered by one frame, kept in `seen` to check nothing leaked into it. */
function socket(envId: string) {
  const session = new OpenEnvSocketSession(episodes, viewer, envId, "req_test");
  const seen: string[] = [];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- frames are asserted field by field
  const send = async (frame: unknown): Promise<any> => {
    const reply = await session.receive(JSON.stringify(frame));
    const text = reply.send[0] as string;
    seen.push(text);
    return JSON.parse(text);
  };
  return { send, seen, reset: (data: Record<string, unknown>) => send({ type: "reset", data }), step: (data: Record<string, unknown>) => send({ type: "step", data }) };
}

const act = (action: string) => ({ content: `<action>${action}</action>` });
const CARD = /Your card is the (Jack|Queen|King)/;

describe("seats on the OpenEnv socket", () => {
  it("binds a session to the only client seat: kuhn-poker's p1 against nash sees p1's card and its reward", async () => {
    const ws = socket("kuhn-poker");
    const reset = await ws.reset({ index: 3 });
    expect(reset.type).toBe("observation");
    const obs = reset.data.observation;
    expect(obs).toMatchObject({ seats: { p1: "client", p2: "nash" }, seat: "p1", to_play: "p1" });
    expect(obs.messages.map((m: { role: string }) => m.role)).toEqual(["system", "user"]);
    const own = CARD.exec(obs.messages[1].content)?.[1];
    const result = await ws.step(act("bet"));
    expect(result.type, JSON.stringify(result)).toBe("observation");
    // nash answers inside the step: one bet is answered by a call or a fold, and the hand is over.
    expect(result.data).toMatchObject({ done: true, observation: { seat: "p1", to_play: null } });
    expect(result.data.reward).toBe(result.data.observation.score.seats.p1.reward);
    const p2 = (await service.get(viewer, obs.episode_id, { seat: "p2" })).messages;
    const theirs = CARD.exec(p2.map((m) => m.content).join("\n"))?.[1];
    // At a showdown p2's card is public; after a fold p1 never hears of it.
    expect(theirs).toBeDefined();
    expect(theirs).not.toBe(own);
    if (/Your opponent folded/.test(JSON.stringify(result.data.observation.messages))) expect(ws.seen.join("\n")).not.toContain(`the ${theirs}`);
    const state = await ws.send({ type: "state" });
    expect(state.data).toMatchObject({ seat: "p1", seats: { p1: "client", p2: "nash" }, to_play: null, done: true });
  });

  it("plays one seat per socket: two sockets on one self-play episode, each shown its own seat only, the turn's owner checked", async () => {
    const a = socket("kuhn-poker");
    const b = socket("kuhn-poker");
    const opened = (await a.reset({ index: 5, seats: { p2: "client" }, seat: "p1" })).data.observation;
    expect(opened).toMatchObject({ seat: "p1", to_play: "p1", seats: { p1: "client", p2: "client" } });
    const id = opened.episode_id as string;
    const joined = (await b.reset({ episode_id: id, seat: "p2" })).data;
    expect(joined.observation).toMatchObject({ resumed: true, seat: "p2", to_play: "p1", turn: 0 });
    expect(joined.observation.messages.at(-1).content).toMatch(/Your opponent acts first/);

    // p2 cannot move before p1, nor p1 as p2.
    const early = await b.step(act("check"));
    expect(early).toMatchObject({ type: "error", data: { code: "EXECUTION_ERROR", edgegym_code: "not_your_turn", details: { to_play: "p1", seat: "p2" } } });
    const wrong = await a.step({ ...act("check"), seat: "p2" });
    expect(wrong).toMatchObject({ type: "error", data: { code: "VALIDATION_ERROR", edgegym_code: "seat_mismatch" } });

    // p1 bets: its socket is shown its own confirmation, not p2's opening or card.
    const bet = (await a.step(act("bet"))).data;
    expect(bet).toMatchObject({ done: false, reward: null, observation: { seat: "p1", to_play: "p2", turn: 1 } });
    expect(bet.observation.messages).toEqual([{ role: "user", content: "You bet 1 chip." }]);
    expect((await a.send({ type: "state" })).data).toMatchObject({ seat: "p1", to_play: "p2", step_count: 1 });

    // p2 learns of the bet by reconnecting (its own transcript), then folds.
    const seen = (await b.reset({ episode_id: id, seat: "p2" })).data.observation;
    expect(seen.messages.at(-1).content).toMatch(/^Your opponent bet 1 chip/);
    const fold = (await b.step(act("fold"))).data;
    expect(fold).toMatchObject({ done: true, observation: { seat: "p2", to_play: null } });
    expect(fold.reward).toBe(fold.observation.score.seats.p2.reward);
    const back = (await a.reset({ episode_id: id })).data;
    expect(back).toMatchObject({ done: true, observation: { seat: "p1", resumed: true } });
    expect(back.reward).toBe(fold.observation.score.seats.p1.reward);

    // No showdown: each socket saw its own card and never the other's.
    const cards = (seen: string[]) => [...new Set([...seen.join("\n").matchAll(/Your card is the (\w+)/g)].map((m) => m[1]))];
    const [p1Card, p2Card] = [cards(a.seen), cards(b.seen)];
    expect(p1Card).toHaveLength(1);
    expect(p2Card).toHaveLength(1);
    expect(a.seen.join("\n")).not.toContain(`the ${p2Card[0]}`);
    expect(b.seen.join("\n")).not.toContain(`the ${p1Card[0]}`);
  });

  it("plays every seat of a self-play episode on one socket when no seat is named: steps name theirs, each reply is the next seat's view", async () => {
    const ws = socket("tic-tac-toe-2p");
    const opened = (await ws.reset({ seed: 3 })).data.observation;
    expect(opened).toMatchObject({ seat: "x", to_play: "x", seats: { x: "client", o: "client" } });
    expect((await ws.step({ content: "<move>5</move>" })).data).toMatchObject({ edgegym_code: "seat_required", details: { client_seats: ["x", "o"] } });
    const first = (await ws.step({ content: "<think>corner next</think><move>5</move>", seat: "x" })).data;
    expect(first.observation).toMatchObject({ seat: "o", to_play: "o", turn: 1 });
    expect(JSON.stringify(first)).not.toContain("corner next");
    expect(first.observation.messages.at(-1).content).toMatch(/X played 5/);
    const second = (await ws.step({ content: "<move>1</move>", seat: "o" })).data;
    expect(second.observation).toMatchObject({ seat: "x", to_play: "x", turn: 2 });
    // A reconnect without a seat shows the seat to play.
    const again = (await socket("tic-tac-toe-2p").reset({ episode_id: opened.episode_id })).data.observation;
    expect(again).toMatchObject({ seat: "x", to_play: "x", resumed: true });
    expect(again.messages.filter((m: { role: string }) => m.role === "assistant")).toHaveLength(1);
  });

  it("refuses a seat it cannot play before any episode starts, with the stable codes", async () => {
    const ws = socket("kuhn-poker");
    expect((await ws.reset({ seat: "p2" })).data).toMatchObject({ code: "EXECUTION_ERROR", edgegym_code: "seat_not_client" });
    expect((await ws.reset({ seats: { p2: "client" } })).data.observation).toMatchObject({ seat: "p1", to_play: "p1" });
    expect((await ws.reset({ seats: { p2: "alphazero" } })).data).toMatchObject({ code: "VALIDATION_ERROR", edgegym_code: "unknown_policy" });
    expect((await ws.reset({ seat: "p3" })).data).toMatchObject({ edgegym_code: "unknown_seat" });
    expect((await ws.reset({ seats: { p2: "alphazero" } })).data).toMatchObject({ edgegym_code: "unknown_policy" });
    expect((await ws.reset({ seats: { p1: "nash" } })).data).toMatchObject({ edgegym_code: "no_client_seat" });
    expect((await socket("reverse-text").reset({ seat: "x" })).data).toMatchObject({ edgegym_code: "seats_unsupported" });
    const single = socket("reverse-text");
    const obs = (await single.reset({ index: 0 })).data.observation;
    expect(obs).not.toHaveProperty("seat");
    expect(obs).not.toHaveProperty("to_play");
    expect((await single.step({ content: "<answer>x</answer>", seat: "x" })).data).toMatchObject({ edgegym_code: "seats_unsupported" });
    expect((await socket("reverse-text").reset({ episode_id: obs.episode_id, seat: "x" })).data).toMatchObject({ edgegym_code: "seats_unsupported" });
  });
});

describe("seats on the OpenEnv HTTP routes", () => {
  let opened: ReturnType<typeof inProcessApp>[] = [];
  afterEach(() => {
    for (const a of opened) a.close();
    opened = [];
  });

  it("reset takes seats and a seat, a step names its seat, state reads a live seated episode", async () => {
    const app = inProcessApp();
    opened.push(app);
    const reset = await app.call("POST", "/openenv/tic-tac-toe-2p/reset", { seed: 4, seat: "o" });
    expect(reset.status, reset.text).toBe(200);
    const obs = reset.json.observation;
    expect(obs).toMatchObject({ seat: "o", to_play: "x", seats: { x: "client", o: "client" } });
    expect(obs.messages.at(-1).content).toMatch(/You play O/);
    const state = await app.call("GET", `/openenv/tic-tac-toe-2p/state?episode_id=${obs.episode_id}`);
    expect(state.status, state.text).toBe(200);
    expect(state.json).toMatchObject({ step_count: 0, to_play: "x", seats: { x: "client", o: "client" } });
    const noSeat = await app.call("POST", "/openenv/tic-tac-toe-2p/step", { episode_id: obs.episode_id, action: { content: "<move>5</move>", turn: 0 } });
    expect(noSeat.status).toBe(422);
    expect(noSeat.json.detail.code).toBe("seat_required");
    const out = await app.call("POST", "/openenv/tic-tac-toe-2p/step", { episode_id: obs.episode_id, action: { content: "<move>5</move>", turn: 0, seat: "o" } });
    expect(out.status).toBe(409);
    expect(out.json.detail).toMatchObject({ code: "not_your_turn", details: { to_play: "x" } });
    const step = await app.call("POST", "/openenv/tic-tac-toe-2p/step", { episode_id: obs.episode_id, action: { content: "<move>5</move>", turn: 0, seat: "x" } });
    expect(step.status, step.text).toBe(200);
    expect(step.json.observation).toMatchObject({ seat: "o", to_play: "o", turn: 1 });
    const tools = await app.call("POST", "/openenv/tic-tac-toe-2p/step", { episode_id: obs.episode_id, action: { type: "list_tools" } });
    expect(tools.status, tools.text).toBe(200);
  });

  it("a client against a policy steps without naming its seat; the schema offers seat on the action and the reset", async () => {
    const app = inProcessApp();
    opened.push(app);
    const obs = (await app.call("POST", "/openenv/tic-tac-toe-2p/reset", { seed: 6, seats: { o: "minimax" } })).json.observation;
    expect(obs).toMatchObject({ seat: "x", to_play: "x" });
    const step = await app.call("POST", "/openenv/tic-tac-toe-2p/step", { episode_id: obs.episode_id, action: { content: "<move>5</move>", turn: 0 } });
    expect(step.status, step.text).toBe(200);
    expect(step.json.observation).toMatchObject({ seat: "x", to_play: "x" });
    expect(step.json.observation.messages.at(-1).content).toMatch(/O played \d/);
    const schema = (await app.call("GET", "/openenv/tic-tac-toe-2p/schema")).json;
    expect(JSON.stringify(schema.action)).toContain('"seat"');
    expect(schema.observation.properties).toHaveProperty("to_play");
  });
});
