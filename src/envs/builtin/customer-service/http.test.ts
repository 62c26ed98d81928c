import { afterEach, describe, expect, it } from "vitest";
import { ORACLE } from "../../../../test/support/customer-service-oracle.js";
import { inProcessApp } from "../../../../test/support/in-process.js";
import { customerTasks, taskById } from "./tasks.js";

/**
 * customer-service over the native HTTP API (in-process app, in-memory SQLite), as a
 * trainer drives it: reset, one step per agent move, the agent seat's view, the score.
 */

let app: ReturnType<typeof inProcessApp> | undefined;
afterEach(() => {
  app?.close();
  app = undefined;
});

describe("customer-service over HTTP", () => {
  it("plays a task to reward 1, and no reply, view or listing carries the user's instructions", async () => {
    app = inProcessApp();
    const { call } = app;
    const task = taskById("return-lamp-refund");
    const index = customerTasks.filter((t) => t.split === "train").findIndex((t) => t.id === task.id);
    const wire: string[] = [];

    const reset = await call("POST", "/v1/envs/customer-service/episodes", { split: "train", index });
    expect(reset.status, reset.text).toBe(201);
    wire.push(reset.text);
    expect(reset.json).toMatchObject({ to_play: "agent" });
    const id = reset.json.episode_id as string;
    expect((reset.json.tools as { function: { name: string } }[]).map((t) => t.function.name)).toContain("return_delivered_items");

    let turn = 0;
    for (const move of ORACLE[task.id]!) {
      const res = await call("POST", `/v1/episodes/${id}/step`, { turn, seat: "agent", message: move });
      expect(res.status, res.text).toBe(200);
      wire.push(res.text);
      turn = res.json.turn as number;
    }
    const agent = await call("GET", `/v1/episodes/${id}?seat=agent`);
    expect(agent.status, agent.text).toBe(200);
    const whole = await call("GET", `/v1/episodes/${id}`);
    const examples = await call("GET", `/v1/envs/customer-service/examples?split=train&limit=50`);
    const info = await call("GET", "/v1/envs/customer-service");
    wire.push(agent.text, whole.text, examples.text, info.text);

    const score = await call("POST", `/v1/episodes/${id}/score`);
    expect(score.status, score.text).toBe(200);
    expect(score.json.score).toMatchObject({ reward: 1, seats: { agent: { reward: 1 }, user: { reward: 1 } } });
    expect(info.json.seats.map((s: { name: string; trainable: boolean }) => [s.name, s.trainable])).toEqual([
      ["agent", true],
      ["user", false],
    ]);

    for (const t of customerTasks) for (const text of wire) expect(text).not.toContain(t.instructions);
  });

  it("refuses an llm user on a server without a configured model, and a client in the user's seat", async () => {
    app = inProcessApp();
    const llm = await app.call("POST", "/v1/envs/customer-service/episodes", { seats: { user: "llm" } });
    expect([llm.status, llm.json.error.code]).toEqual([422, "invalid_env_args"]);
    const client = await app.call("POST", "/v1/envs/customer-service/episodes", { seats: { user: "client" } });
    expect([client.status, client.json.error.code]).toEqual([422, "unknown_policy"]);
  });
});
