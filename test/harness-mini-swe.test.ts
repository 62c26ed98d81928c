import { dirname } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../src/server/node/serve.js";
import { startHarnessServer, type HarnessServer } from "./support/harness-server.js";
import { containersWith, dockerReady } from "./support/docker.js";
import { harborHttp, type Json } from "./support/harbor-http.js";
import { ensureMiniSweTask, MINI_AGENT_COMMAND, MINI_SOLVING_REPLIES } from "./support/mini-swe-image.js";
import { startScriptedUpstream, type ScriptedUpstream } from "./support/scripted-upstream.js";

/*
 * A real harness, unchanged: mini-swe-agent 2.4.6 (installed in the task's image from
 * wheels fetched on the host) runs in an offline task's box against a scripted upstream
 * whose three replies solve the task. The episode holds one turn per call the upstream
 * received, in order, equal as JSON to what it received and answered; mini exits 0 and the
 * task's tests give reward 1. The first run builds the image (minutes); later runs hit
 * Docker's cache.
 */

const ready = dockerReady();

describe.skipIf(!ready)("mini-swe-agent as a harness episode", () => {
  let harness: HarnessServer;
  let server: RunningServer;
  let upstream: ScriptedUpstream;
  const { api } = harborHttp(() => server.url);

  beforeAll(async () => {
    const { taskDir } = await ensureMiniSweTask();
    upstream = await startScriptedUpstream({ replies: [...MINI_SOLVING_REPLIES] });
    harness = await startHarnessServer("edgegym-harness-mini-", [dirname(taskDir)], { scripted: { url: upstream.url } });
    server = harness.server;
  }, 120_000);
  afterAll(async () => {
    await harness?.close();
    await upstream?.close();
  });

  it("solves the task through the episode's endpoint, one turn per call, equal to what the upstream got and answered", async () => {
    // The reset builds the image on a cold machine (edgegym's own builder, cached by content after).
    const reset = await api("POST", "/v1/envs/harbor/episodes", { args: { task: "edgegym/write-greeting" }, agent: { command: MINI_AGENT_COMMAND, upstream: "scripted", model: "policy-under-training", timeout_seconds: 300 } });
    expect(reset.status, JSON.stringify(reset.body)).toBe(201);
    const id = reset.body.episode_id as string;
    let episode: Json = {};
    for (let i = 0; i < 1500; i++) {
      episode = (await api("GET", `/v1/episodes/${id}`)).body;
      if (episode.agent?.status !== "running") break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(episode.agent, episode.agent?.output_tail).toMatchObject({ status: "exited", exit_code: 0, calls: 3 });
    expect(episode.stop_reason).toBe("agent_exit");
    const calls = episode.turns.filter((t: Json) => t.call).map((t: Json) => t.call);
    expect(calls).toHaveLength(3);
    expect(upstream.received).toHaveLength(3);
    calls.forEach((call: Json, i: number) => {
      // mini sends {model, messages, tools}; edgegym sets the episode's model and stream: false.
      expect(upstream.received[i]?.body).toEqual({ ...call.request, model: "policy-under-training", stream: false });
      expect(call.response).toEqual(upstream.answered[i]);
      expect(call).toMatchObject({ wire: "chat", stream: false, status: 200, error: null });
    });
    // Each call resends the history: the second carries the first reply and its tool output.
    expect(calls[1].request.messages.length).toBeGreaterThan(calls[0].request.messages.length);
    const score = await api("POST", `/v1/episodes/${id}/score`);
    expect(score.status, JSON.stringify(score.body)).toBe(200);
    expect(score.body.score.reward).toBe(1);
    expect(containersWith(harness.label)).toEqual([]);
  }, 600_000);
});
