import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineRubric, defineTool, EnvRegistry, multiTurnEnv, rowsDataset, toolEnv, type AnyEnvironment } from "../../envs/index.js";
import { jsonInit, readReply, type HttpReply } from "../../../test/support/reply.js";
import { createApp } from "../app.js";
import type { ServerConfig } from "../context.js";
import { openNodeDatabase, type NodeDatabase } from "../db/node-sqlite.js";

const opened: NodeDatabase[] = [];
afterEach(() => {
  while (opened.length) opened.pop()?.close();
});

const KEYS = { alice: "sk-alice-1", bob: "sk-bob-1", admin: "sk-admin-1" };

/** Apps over one in-memory database: `deploy(envs, config)` builds another over the same rows. */
function database() {
  const db = openNodeDatabase(":memory:");
  opened.push(db);
  let now = Date.parse("2026-11-22T12:00:00Z");
  const deploy = (envs: AnyEnvironment[], config: Partial<ServerConfig> = {}) => {
    const { app } = createApp({ db: db.db, registry: new EnvRegistry("node", envs), config: { apiKeys: [`alice:${KEYS.alice}`, `bob:${KEYS.bob}`], adminApiKeys: [`ops:${KEYS.admin}`], ...config }, clock: () => now });
    return (key: string = KEYS.alice) =>
      async (method: string, path: string, body?: unknown): Promise<HttpReply> =>
        readReply(await app.request(path, jsonInit(method, body, { authorization: `Bearer ${key}` })));
  };
  return { deploy, advance: (ms: number) => (now += ms) };
}

/** A tool environment that counts, outside its state, every time its tool or its `respond` runs. */
function countingTools(runs: { tool: number; respond: number }, version = "1.0.0"): AnyEnvironment {
  return toolEnv<Record<string, never>, { calls: number }>({
    id: "counted",
    version,
    description: "",
    dataset: rowsDataset({ train: [{ prompt: "Call bump, then answer.", answer: "1" }] }),
    stateSchema: z.object({ calls: z.number() }),
    setup: () => ({ state: { calls: 0 } }),
    tools: [
      defineTool<{ calls: number }, z.ZodObject<Record<string, never>>>({
        name: "bump",
        description: "Counts.",
        parameters: z.object({}),
        run: (_args, ctx) => {
          runs.tool++;
          ctx.state.calls++;
          return String(ctx.state.calls);
        },
      }),
    ],
    respond: (state) => {
      runs.respond++;
      return { state };
    },
    rubric: defineRubric<{ calls: number }>([{ name: "called", weight: 1, fn: ({ state }) => state?.calls ?? 0 }]),
  });
}

const bump = { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "bump", arguments: "{}" } }] };

describe("POST /v1/episodes/{id}/rescore", () => {
  it("runs no tool and no respond: only the rubric, over the stored state", async () => {
    const runs = { tool: 0, respond: 0 };
    const call = database().deploy([countingTools(runs)])();
    const id = (await call("POST", "/v1/envs/counted/episodes", { index: 0 })).json.episode_id;
    await call("POST", `/v1/episodes/${id}/step`, { turn: 0, message: bump });
    expect(runs).toEqual({ tool: 1, respond: 1 });
    const rescored = await call("POST", `/v1/episodes/${id}/rescore`, { rubric: "current" });
    expect(rescored.status, rescored.text).toBe(200);
    expect(rescored.json.score.reward).toBe(1);
    expect(runs).toEqual({ tool: 1, respond: 1 });
  });

  it("leaves an active episode active unless asked to save, and saving ends it as scoring does", async () => {
    const call = database().deploy([countingTools({ tool: 0, respond: 0 })])();
    const id = (await call("POST", "/v1/envs/counted/episodes", { index: 0 })).json.episode_id;
    await call("POST", `/v1/episodes/${id}/step`, { turn: 0, message: bump });
    const looked = await call("POST", `/v1/episodes/${id}/rescore`, {});
    expect(looked.json).toMatchObject({ saved: false, previous_score: null });
    expect((await call("GET", `/v1/episodes/${id}`)).json).toMatchObject({ status: "active", score: null });
    const saved = await call("POST", `/v1/episodes/${id}/rescore`, { save: true });
    expect(saved.json).toMatchObject({ saved: true, score: { reward: 1 } });
    expect((await call("GET", `/v1/episodes/${id}`)).json).toMatchObject({ status: "done", stop_reason: "scored", score: { reward: 1 } });
  });

  it("answers another tenant's episode as unknown (404), lets an admin key rescore it, and 410 after the TTL", async () => {
    const { deploy, advance } = database();
    const as = deploy([countingTools({ tool: 0, respond: 0 })]);
    const id = (await as(KEYS.alice)("POST", "/v1/envs/counted/episodes", { index: 0, ttl_seconds: 60 })).json.episode_id;
    const bob = await as(KEYS.bob)("POST", `/v1/episodes/${id}/rescore`, {});
    const unknown = await as(KEYS.bob)("POST", "/v1/episodes/ep_unknown/rescore", {});
    expect([bob.status, bob.json.error.code]).toEqual([404, "episode_not_found"]);
    expect(bob.json.error.message.replace(id, "ID")).toBe(unknown.json.error.message.replace("ep_unknown", "ID"));
    expect((await as(KEYS.bob)("POST", `/v1/episodes/${id}/rescore`, { save: true })).status).toBe(404);
    expect((await as(KEYS.admin)("POST", `/v1/episodes/${id}/rescore`, {})).status).toBe(200);
    expect((await as()("POST", `/v1/episodes/${id}/rescore`, {})).status).toBe(200);
    advance(61_000);
    const expired = await as()("POST", `/v1/episodes/${id}/rescore`, {});
    expect([expired.status, expired.json.error.code]).toEqual([410, "episode_expired"]);
  });
});

describe("POST …/rescore with save, racing a step", () => {
  it("saves nothing when a step lands while the rubric runs (409 turn_conflict), and saves once rescored again", async () => {
    let release: () => void = () => {};
    let holding = false;
    const env = multiTurnEnv({
      id: "slow-rubric",
      version: "1.0.0",
      description: "",
      dataset: rowsDataset({ train: [{ prompt: "go" }] }),
      maxTurns: 3,
      respond: (state) => ({ state }),
      rubric: defineRubric([
        {
          name: "slow",
          weight: 1,
          fn: async ({ completion }) => {
            if (holding) await new Promise<void>((done) => (release = done));
            return completion.length;
          },
        },
      ]),
    });
    const call = database().deploy([env])();
    const id = (await call("POST", "/v1/envs/slow-rubric/episodes", { index: 0 })).json.episode_id;
    await call("POST", `/v1/episodes/${id}/step`, { turn: 0, message: { role: "assistant", content: "a" } });
    holding = true;
    const rescoring = call("POST", `/v1/episodes/${id}/rescore`, { save: true });
    await new Promise((r) => setTimeout(r, 20));
    holding = false;
    expect((await call("POST", `/v1/episodes/${id}/step`, { turn: 1, message: { role: "assistant", content: "b" } })).status).toBe(200);
    release();
    const raced = await rescoring;
    expect([raced.status, raced.json.error?.code, raced.json.error?.details]).toEqual([409, "turn_conflict", { episode_turn: 2 }]);
    expect((await call("GET", `/v1/episodes/${id}`)).json).toMatchObject({ status: "active", score: null, turn: 2 });
    const again = await call("POST", `/v1/episodes/${id}/rescore`, { save: true });
    expect(again.json).toMatchObject({ saved: true, score: { reward: 2 } });
  });
});

describe("EDGEGYM_ENV_VERSION_CHECK", () => {
  const counting = (opts: { version?: string; weight?: number } = {}) =>
    multiTurnEnv({
      id: "counting",
      version: opts.version ?? "1.0.0",
      description: "",
      dataset: rowsDataset({ train: [{ prompt: "go" }] }),
      maxTurns: 3,
      respond: (state) => ({ state, messages: [{ role: "user", content: "ok" }] }),
      rubric: defineRubric([{ name: "one", weight: opts.weight ?? 1, fn: () => 1 }]),
    });
  const step = (call: ReturnType<ReturnType<ReturnType<typeof database>["deploy"]>>, id: string, turn: number) =>
    call("POST", `/v1/episodes/${id}/step`, { turn, message: { role: "assistant", content: "x" } });

  it("version: a changed hash under the same version goes on, a new version does not; off: everything goes on", async () => {
    const { deploy } = database();
    const v1 = deploy([counting()])();
    const id = (await v1("POST", "/v1/envs/counting/episodes", { index: 0 })).json.episode_id;
    expect((await step(deploy([counting({ weight: 2 })])(), id, 0)).json.error.code).toBe("env_version_mismatch");
    expect((await step(deploy([counting({ weight: 2 })], { envVersionCheck: "version" })(), id, 0)).status).toBe(200);
    expect((await step(deploy([counting({ version: "2.0.0" })], { envVersionCheck: "version" })(), id, 1)).json.error.code).toBe("env_version_mismatch");
    expect((await step(deploy([counting({ version: "2.0.0" })], { envVersionCheck: "off" })(), id, 1)).status).toBe(200);
  });

  it("a retry of a step already applied is answered from storage even after the environment changed", async () => {
    const { deploy } = database();
    const v1 = deploy([counting()])();
    const id = (await v1("POST", "/v1/envs/counting/episodes", { index: 0 })).json.episode_id;
    const first = await step(v1, id, 0);
    const retried = await step(deploy([counting({ version: "2.0.0" })])(), id, 0);
    expect(retried.status).toBe(200);
    expect(retried.text).toBe(first.text);
  });
});
