import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { builtinEnvs, EnvRegistry } from "../../envs/index.js";
import { DEFAULT_CONFIG } from "../context.js";
import { EpisodeStore } from "../db/episode-store.js";
import { openNodeDatabase } from "../db/node-sqlite.js";
import { EpisodeService } from "../episodes/episode-service.js";
import { PUBLIC_TENANT } from "../tenants/keys.js";
import { EpisodeSocketSession } from "./episode-session.js";

// The /v1/ws session without a socket: frames in, frames out, over a real service and SQLite.

let database: ReturnType<typeof openNodeDatabase>;
let session: EpisodeSocketSession;
let other: EpisodeSocketSession;

beforeEach(() => {
  database = openNodeDatabase(":memory:");
  const service = new EpisodeService(new EpisodeStore(database.db), new EnvRegistry("node", builtinEnvs), DEFAULT_CONFIG, Date.now);
  session = new EpisodeSocketSession(service, { name: PUBLIC_TENANT, admin: false }, "req_sock");
  other = new EpisodeSocketSession(service, { name: "mallory", admin: false }, "req_other");
});
afterEach(() => database.close());

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- frames are asserted field by field
async function ask(s: EpisodeSocketSession, frame: unknown): Promise<{ text: string; json: any }> {
  const reply = await s.receive(typeof frame === "string" ? frame : JSON.stringify(frame));
  expect(reply.send).toHaveLength(1);
  const text = reply.send[0] as string;
  return { text, json: JSON.parse(text) };
}

describe("EpisodeSocketSession", () => {
  it("plays an episode: reset, step, get, score, close, each answered under its id with the HTTP status and body", async () => {
    const reset = await ask(session, { id: "r", op: "reset", env_id: "reverse-text", body: { index: 0 }, idempotency_key: "k1" });
    expect(reset.json).toMatchObject({ id: "r", status: 201, replayed: false, body: { env_id: "reverse-text", turn: 0 } });
    const id = reset.json.body.episode_id as string;
    const again = await ask(session, { id: 2, op: "reset", env_id: "reverse-text", body: { index: 0 }, idempotency_key: "k1" });
    expect(again.json).toMatchObject({ id: 2, status: 201, replayed: true, body: { episode_id: id } });
    const text = reset.json.body.messages.at(-1).content as string;
    const step = await ask(session, { id: 3, op: "step", episode_id: id, body: { turn: 0, message: { role: "assistant", content: `<answer>${Array.from(text).reverse().join("")}</answer>` } } });
    expect(step.json).toMatchObject({ id: 3, status: 200, body: { turn: 1, done: true } });
    expect((await ask(session, { id: 4, op: "get", episode_id: id, query: { from_turn: 1 } })).json).toMatchObject({ id: 4, status: 200, body: { episode_id: id, turn: 1 } });
    const score = await ask(session, { id: 5, op: "score", episode_id: id });
    expect(score.json.body.score.reward).toBeCloseTo(1.2, 10);
    expect((await ask(session, { id: 6, op: "close", episode_id: id })).json).toMatchObject({ id: 6, status: 200, body: { episode_id: id } });
  });

  it("answers a retried step with the same bytes, and a different message at a past turn with 409 turn_conflict", async () => {
    const id = (await ask(session, { id: 1, op: "reset", env_id: "tic-tac-toe", body: { seed: 2, args: { opponent: "random" } } })).json.body.episode_id;
    const first = await ask(session, { id: "a", op: "step", episode_id: id, body: { turn: 0, message: { role: "assistant", content: "<move>5</move>" } } });
    const retry = await ask(session, { id: "a", op: "step", episode_id: id, body: { turn: 0, message: { role: "assistant", content: "<move>5</move>" } } });
    expect(retry.text).toBe(first.text);
    const conflict = await ask(session, { id: "b", op: "step", episode_id: id, body: { turn: 0, message: { role: "assistant", content: "<move>1</move>" } } });
    expect(conflict.json).toMatchObject({ id: "b", status: 409, error: { code: "turn_conflict", request_id: "req_sock.4" } });
  });

  it("answers bad frames with a 4xx under their id when it can be read, null when not", async () => {
    expect((await ask(session, "{nope")).json).toMatchObject({ id: null, status: 400, error: { code: "malformed_json" } });
    expect((await ask(session, "[".repeat(100) + "]".repeat(100))).json).toMatchObject({ id: null, status: 400, error: { code: "json_too_deep" } });
    expect((await ask(session, { id: 7, op: "dance" })).json).toMatchObject({ id: 7, status: 400, error: { code: "invalid_request" } });
    expect((await ask(session, { id: 8, op: "step", episode_id: "ep_x", body: { message: { role: "assistant", content: "x" } } })).json).toMatchObject({ id: 8, status: 400, error: { code: "invalid_request" } });
    expect((await ask(session, { id: 9, op: "score", episode_id: "ep_x", extra: 1 })).json).toMatchObject({ id: 9, status: 400, error: { code: "invalid_request" } });
    expect((await ask(session, '{"id": 10, "op": "score", "episode_id": "ep_x", "__proto__": {}}')).json).toMatchObject({ id: 10, status: 400, error: { code: "invalid_request" } });
    expect((await ask(session, { id: "x".repeat(129), op: "score", episode_id: "ep_x" })).json).toMatchObject({ id: null, status: 400 });
    expect((await ask(session, { id: -1, op: "score", episode_id: "ep_x" })).json).toMatchObject({ id: null, status: 400 });
    expect((await ask(session, { id: 11, op: "score", episode_id: "ep_missing" })).json).toMatchObject({ id: 11, status: 404, error: { code: "episode_not_found" } });
    expect((await ask(session, { id: 12, op: "reset", env_id: "no-such-env" })).json).toMatchObject({ id: 12, status: 404, error: { code: "env_not_found" } });
  });

  it("never shows one tenant's episode to another: it answers as an unknown id does", async () => {
    const id = (await ask(session, { id: 1, op: "reset", env_id: "reverse-text" })).json.body.episode_id;
    const probe = await ask(other, { id: 1, op: "get", episode_id: id });
    expect(probe.json).toMatchObject({ id: 1, status: 404, error: { code: "episode_not_found" } });
  });

  it("words the socket layer's refusals as tagged errors: the busy one under the frame's id, with Retry-After 0", () => {
    expect(JSON.parse(session.refuse({ kind: "busy", queued: 4, limit: 4 }, '{"id": "q", "op": "score"}'))).toMatchObject({
      id: "q",
      status: 429,
      retry_after: 0,
      error: { code: "rate_limited", details: { in_flight: 4, limit: 4 } },
    });
    expect(JSON.parse(session.refuse({ kind: "busy", queued: 4, limit: 4 }, "not json"))).toMatchObject({ id: null, status: 429 });
    expect(JSON.parse(session.refuse({ kind: "too_large", bytes: 2000, limit: 1000 }))).toMatchObject({ id: null, status: 413, error: { code: "payload_too_large" } });
    expect(JSON.parse(session.refuse({ kind: "binary" }))).toMatchObject({ id: null, status: 400, error: { code: "malformed_json" } });
  });

  it("carries seats: reset takes seats, steps name their seat, replies say to_play, and seat errors are frames with their codes", async () => {
    const reset = await ask(session, { id: "r", op: "reset", env_id: "kuhn-poker", body: { index: 5, seats: { p2: "client" } } });
    expect(reset.json).toMatchObject({ id: "r", status: 201, body: { to_play: "p1" } });
    const id = reset.json.body.episode_id as string;
    const bet = { role: "assistant", content: "<think>I hold a strong card</think><action>bet</action>" };

    const early = await ask(session, { id: 1, op: "step", episode_id: id, body: { turn: 0, seat: "p2", message: { role: "assistant", content: "<action>check</action>" } } });
    expect(early.json).toMatchObject({ id: 1, status: 409, error: { code: "not_your_turn", details: { to_play: "p1", seat: "p2" } } });
    expect((await ask(session, { id: 2, op: "step", episode_id: id, body: { turn: 0, message: bet } })).json).toMatchObject({ status: 422, error: { code: "seat_required", details: { client_seats: ["p1", "p2"] } } });
    expect((await ask(session, { id: 3, op: "step", episode_id: id, body: { turn: 0, seat: "p9", message: bet } })).json).toMatchObject({ status: 422, error: { code: "unknown_seat" } });

    const first = await ask(session, { id: 4, op: "step", episode_id: id, body: { turn: 0, seat: "p1", message: bet } });
    expect(first.json).toMatchObject({ id: 4, status: 200, body: { turn: 1, to_play: "p2", done: false } });
    // p2's reply: its opening and p1's action word, never p1's text.
    expect(first.json.body.messages.at(-1).content).toMatch(/^Your opponent bet 1 chip/);
    expect(first.text).not.toContain("strong card");
    // A retry of p1's step is the stored reply, byte for byte; the same turn by p2 is a conflict.
    const retry = await ask(session, { id: 4, op: "step", episode_id: id, body: { turn: 0, seat: "p1", message: bet } });
    expect(retry.text).toBe(first.text);
    expect((await ask(session, { id: 5, op: "step", episode_id: id, body: { turn: 0, seat: "p2", message: bet } })).json).toMatchObject({ status: 409, error: { code: "turn_conflict" } });

    // The whole log waits for the end; one seat's view does not.
    expect((await ask(session, { id: 6, op: "get", episode_id: id })).json).toMatchObject({ status: 422, error: { code: "seat_required" } });
    const p2 = await ask(session, { id: 7, op: "get", episode_id: id, query: { seat: "p2" } });
    expect(p2.json.body).toMatchObject({ seat: "p2", to_play: "p2", seats: { p1: "client", p2: "client" } });
    expect(p2.text).not.toContain("strong card");

    const fold = await ask(session, { id: 8, op: "step", episode_id: id, body: { turn: 1, seat: "p2", message: { role: "assistant", content: "<action>fold</action>" } } });
    expect(fold.json).toMatchObject({ status: 200, body: { done: true, to_play: null } });
    const score = await ask(session, { id: 9, op: "score", episode_id: id });
    expect(Object.keys(score.json.body.score.seats)).toEqual(["p1", "p2"]);
    expect((await ask(session, { id: 10, op: "get", episode_id: id })).json).toMatchObject({ status: 200, body: { done: true } });
    expect((await ask(session, { id: 11, op: "reset", env_id: "reverse-text", body: { seats: { x: "client" } } })).json).toMatchObject({ status: 422, error: { code: "seats_unsupported" } });
  });
});
