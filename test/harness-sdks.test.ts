import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../src/server/node/serve.js";
import { startHarnessServer, type HarnessServer } from "./support/harness-server.js";
import { dockerReady } from "./support/docker.js";
import { harborHttp, type Json } from "./support/harbor-http.js";
import { REPO_ROOT } from "./support/node-server.js";
import { pinnedVenvPython } from "./support/python-client.js";
import { startScriptedUpstream, type ScriptedUpstream } from "./support/scripted-upstream.js";

/*
 * The official SDKs against a harness episode's endpoint, from outside the container with
 * the key the reset returned: openai's Chat Completions (plain and streamed) and Responses
 * (plain and streamed), anthropic's Messages (plain with a tool call, and streamed), each
 * translated to the upstream's Chat Completions and recorded as one turn; a wrong key is
 * each SDK's own authentication error. The SDKs come from the ORS venv (openai, anthropic).
 */

const FIXTURES = join(REPO_ROOT, "test/fixtures/harbor-tasks");
const { python, ready: venvReady } = pinnedVenvPython({ name: "ors", envVar: "ORS" }, "the harness SDK test");
const ready = dockerReady() && venvReady;

describe.skipIf(!ready)("the openai and anthropic SDKs on a harness episode's endpoint", () => {
  let harness: HarnessServer;
  let server: RunningServer;
  let upstream: ScriptedUpstream;
  const { api } = harborHttp(() => server.url);

  beforeAll(async () => {
    const bash = (command: string) => ({ function: { name: "bash", arguments: { command } } });
    upstream = await startScriptedUpstream({
      replies: [
        { content: "Let me look.", tool_calls: [bash("ls /var/log/service")] },
        { content: "streamed chat answer" },
        { content: "a response", tool_calls: [bash("wc -l /var/log/service/service.log")] },
        { content: "a streamed response" },
        { content: "Counting now.", tool_calls: [bash("grep -c ERROR /var/log/service/service.log")] },
        { content: "a streamed message" },
      ],
    });
    harness = await startHarnessServer("edgegym-harness-sdk-", [FIXTURES], { scripted: { url: upstream.url } });
    server = harness.server;
  }, 300_000);
  afterAll(async () => {
    await harness?.close();
    await upstream?.close();
  });

  it("answers every wire as its SDK expects and records each call as a turn", async () => {
    const reset = await api("POST", "/v1/envs/harbor/episodes", { args: { task: "count-errors" }, agent: { command: "sleep 300", upstream: "scripted", model: "scripted-model", timeout_seconds: 300 } });
    expect(reset.status, JSON.stringify(reset.body)).toBe(201);
    const { openai_base_url, anthropic_base_url, api_key } = reset.body.model_endpoint;
    // Asynchronously: the server runs in this process, and a synchronous spawn would stop it from answering.
    const run = await promisify(execFile)(python, [join(REPO_ROOT, "test/fixtures/harness/sdk_calls.py"), openai_base_url, anthropic_base_url, api_key], { encoding: "utf8", timeout: 60_000 });
    const lines = run.stdout.trim().split("\n").map((l) => JSON.parse(l) as Json);
    const by = Object.fromEntries(lines.map((l) => [l.kind, l]));
    expect(by.chat).toEqual({ kind: "chat", text: "Let me look.", tools: ["bash"], finish: "tool_calls" });
    expect(by.chat_stream).toEqual({ kind: "chat_stream", text: "streamed chat answer", finish: "stop" });
    expect(by.responses).toEqual({ kind: "responses", text: "a response", tools: ["bash"], status: "completed" });
    expect(by.responses_stream).toEqual({ kind: "responses_stream", text: "a streamed response", completed: true });
    expect(by.messages).toEqual({ kind: "messages", text: "Counting now.", tools: [{ command: "grep -c ERROR /var/log/service/service.log" }], stop: "tool_use" });
    expect(by.messages_stream).toEqual({ kind: "messages_stream", text: "a streamed message", stop: "end_turn" });
    expect(by.wrong_key).toEqual({ kind: "wrong_key", error: "AuthenticationError", status: 401 });
    expect(by.wrong_key_anthropic).toEqual({ kind: "wrong_key_anthropic", error: "AuthenticationError", status: 401 });

    const episode = (await api("GET", `/v1/episodes/${reset.body.episode_id}`)).body;
    const calls = episode.turns.filter((t: Json) => t.call).map((t: Json) => t.call);
    expect(calls.map((c: Json) => [c.wire, c.stream])).toEqual([
      ["chat", false],
      ["chat", true],
      ["responses", false],
      ["responses", true],
      ["messages", false],
      ["messages", true],
    ]);
    // The upstream got Chat Completions every time: the Anthropic system prompt and tool as Chat's.
    const fifth = upstream.received[4]?.body as Json;
    expect(fifth.messages[0]).toEqual({ role: "system", content: "be brief" });
    expect(fifth.tools[0].function.name).toBe("bash");
    expect(fifth.model).toBe("scripted-model");
    // The episode's answer to each call is what the SDK parsed: e.g. the Anthropic tool_use block.
    expect(calls[4].response.content.find((b: Json) => b.type === "tool_use").input).toEqual({ command: "grep -c ERROR /var/log/service/service.log" });
    expect((await api("DELETE", `/v1/episodes/${reset.body.episode_id}`)).status).toBe(200);
  }, 180_000);
});
