import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineRubric, defineTool, rowsDataset, toolEnv } from "../src/envs/index.js";
import { startNodeServer, type RunningServer } from "../src/server/node/serve.js";
import { hangingTool } from "./support/hanging-tool.js";

const { tool: hang, events, started } = hangingTool();
const quick = defineTool<unknown, z.ZodObject>({ name: "quick", description: "Answers at once.", parameters: z.object({}).strict(), run: () => "done" });
const hangs = toolEnv({ id: "hangs", version: "1", description: "d", dataset: rowsDataset({ train: [{ prompt: "go" }] }), tools: [hang, quick], rubric: defineRubric([]) });

const message = (name: string) => ({ role: "assistant", content: null, tool_calls: [{ id: "t1", type: "function", function: { name, arguments: "{}" } }] });

let server: RunningServer;
beforeAll(async () => {
  server = await startNodeServer({ port: 0, host: "127.0.0.1", dbPath: ":memory:", extraEnvs: [hangs], reapIntervalMs: 0 });
});
afterAll(() => server.close());

describe("a step whose client goes away (real HTTP)", () => {
  it("stops the running tool, stores nothing, and a retry of the same turn runs afresh", async () => {
    const reset = await fetch(`${server.url}/v1/envs/hangs/episodes`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    const { episode_id: id } = (await reset.json()) as { episode_id: string };

    const client = new AbortController();
    const step = fetch(`${server.url}/v1/episodes/${id}/step`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ turn: 0, message: message("hang") }),
      signal: client.signal,
    }).catch((err: unknown) => err);
    await started;
    client.abort();
    expect(await step).toBeInstanceOf(Error);
    for (let i = 0; i < 100 && !events.includes("aborted"); i++) await new Promise((r) => setTimeout(r, 20));
    expect(events).toEqual(["started", "aborted"]);

    const episode = (await (await fetch(`${server.url}/v1/episodes/${id}`)).json()) as { turn: number; messages: unknown[] };
    expect(episode.turn).toBe(0);
    expect(episode.messages).toHaveLength(1);

    // Turn 0 was never taken: the client's retry (here with another message) is a fresh step.
    const retry = await fetch(`${server.url}/v1/episodes/${id}/step`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ turn: 0, message: message("quick") }),
    });
    expect(retry.status).toBe(200);
    expect(((await retry.json()) as { messages: { content: string }[] }).messages[0]?.content).toBe("done");
  }, 30_000);
});
