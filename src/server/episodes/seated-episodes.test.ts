import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { builtinEnvs, CLIENT_PLAYER, defineRubric, EnvRegistry, multiTurnEnv, proceduralDataset, SeatAssignment, toSeat } from "../../envs/index.js";
import { createApp } from "../app.js";
import { openNodeDatabase } from "../db/node-sqlite.js";
import { describeSeatsConformance } from "../../../test/conformance/seats-conformance.js";
import { jsonInit, readReply } from "../../../test/support/reply.js";

/** Two seats taking turns with no end of their own: only max_turns stops them. */
const endless = multiTurnEnv({
  id: "test-endless-seats",
  version: "1.0.0",
  description: "a and b take turns until max_turns",
  stateSchema: z.object({ seats: SeatAssignment, next: z.enum(["a", "b"]) }).strict(),
  maxTurns: 3,
  dataset: proceduralDataset(() => ({ prompt: [] })),
  seats: {
    seats: ["a", "b"].map((name) => ({ name, description: name, players: [CLIENT_PLAYER], default: CLIENT_PLAYER })),
    policies: {},
    toPlay: (state) => state.next,
    assignment: (state) => state.seats,
  },
  setup: (_row, { seats }) => ({ state: { seats: seats ?? {}, next: "a" as const }, messages: [toSeat("a", "go"), toSeat("b", "wait")] }),
  respond: (state, _message, { seat }) => {
    const next = seat === "a" ? ("b" as const) : ("a" as const);
    return { state: { ...state, next }, messages: [toSeat(next, `${seat} moved`)] };
  },
  rubric: defineRubric([{ name: "one", weight: 1, fn: () => 1 }]),
});

// The seats contract in-process (Hono's app.fetch over in-memory SQLite); test/conformance-*.test.ts run it against every runtime.
const database = openNodeDatabase(":memory:");
afterAll(() => database.close());
const { app } = createApp({ db: database.db, registry: new EnvRegistry("node", [...builtinEnvs, endless]) });
describeSeatsConformance({ name: "in-process app", baseUrl: () => "http://local", fetch: async (request) => app.fetch(request) });

describe("a seated episode a stop condition ends", () => {
  it("answers to_play null once done, with the stepping seat's last view, though a seat is still to move in its state", async () => {
    const call = async (method: string, path: string, body?: unknown) => readReply(await app.request(path, jsonInit(method, body)));
    const ep = (await call("POST", "/v1/envs/test-endless-seats/episodes", {})).json;
    let last;
    for (const [turn, seat] of ["a", "b", "a"].entries()) last = await call("POST", `/v1/episodes/${ep.episode_id}/step`, { turn, seat, message: { role: "assistant", content: "x" } });
    expect(last?.json).toMatchObject({ done: true, stop_reason: "max_turns", truncated: true, to_play: null, messages: [] });
    const view = await call("GET", `/v1/episodes/${ep.episode_id}?seat=b`);
    expect(view.json.to_play).toBeNull();
  });
});

describe("hostile seat input", () => {
  const call = async (method: string, path: string, body?: unknown) => readReply(await app.request(path, jsonInit(method, body)));
  it("refuses wrong types, long names, prototype keys and a flood of seats with a 4xx, never a 500", async () => {
    const codes = async (body: unknown) => (await call("POST", "/v1/envs/tic-tac-toe-2p/episodes", body)).json.error?.code;
    expect(await codes({ seats: { x: 1 } })).toBe("invalid_request");
    expect(await codes({ seats: "x" })).toBe("invalid_request");
    expect(await codes({ seats: { ["x".repeat(33)]: "client" } })).toBe("invalid_request");
    expect(await codes({ seats: { x: "m".repeat(33) } })).toBe("invalid_request");
    expect(await codes('{"seats": {"__proto__": "client"}}')).toBe("invalid_request");
    const flood = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`s${i}`, "client"]));
    expect(await codes({ seats: flood })).toBe("unknown_seat");
    const ep = (await call("POST", "/v1/envs/tic-tac-toe-2p/episodes", {})).json;
    const step = await call("POST", `/v1/episodes/${ep.episode_id}/step`, { turn: 0, seat: "x".repeat(33), message: { role: "assistant", content: "<move>1</move>" } });
    expect(step.json.error.code).toBe("invalid_request");
    const view = await call("GET", `/v1/episodes/${ep.episode_id}?seat=${"x".repeat(33)}`);
    expect(view.status).toBe(400);
  });
});
