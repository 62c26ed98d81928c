import { execFile, execFileSync } from "node:child_process";
import { request } from "node:http";
import { promisify } from "node:util";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../src/server/node/serve.js";
import { dockerReady } from "./support/docker.js";
import { harborHttp, type Json } from "./support/harbor-http.js";
import { REPO_ROOT } from "./support/node-server.js";
import { startHarnessServer, type HarnessServer } from "./support/harness-server.js";
import { startScriptedUpstream, type ScriptedUpstream } from "./support/scripted-upstream.js";

/*
 * Harness episodes on the real Node server and Docker: a reset with `agent` starts a small
 * tool-calling agent (stdlib Python, test/fixtures/harness/tiny_agent.py) in the task's
 * offline container; it reaches the episode's model endpoint on the egress gateway and
 * nothing else; every call it makes is forwarded to a scripted upstream and stored as a
 * turn, equal as JSON to what the upstream got and answered; the episode ends when the
 * agent exits, on its call limit, or on its time limit; the task's tests score it.
 */

const FIXTURES = join(REPO_ROOT, "test/fixtures/harbor-tasks");
const AGENT = readFileSync(join(REPO_ROOT, "test/fixtures/harness/tiny_agent.py"));
const ready = dockerReady();
const UPSTREAM_KEY = "sk-upstream-never-leaves-the-server";

/** The agent command: the script shipped in base64 (no quoting to get wrong), then run. */
function agentCommand(env = ""): string {
  return `printf '%s' '${AGENT.toString("base64")}' | base64 -d > /tmp/tiny_agent.py && ${env} python3 /tmp/tiny_agent.py`;
}

/** The offline-report task's oracle (its python part: the tool runs it with sh), as the scripted model's command. */
const SOLVE = readFileSync(join(FIXTURES, "offline-report/solution/solve.sh"), "utf8").slice(readFileSync(join(FIXTURES, "offline-report/solution/solve.sh"), "utf8").indexOf("python3 - <<"));

describe.skipIf(!ready)("harness episodes: an agent in the sandbox through the episode's model endpoint", () => {
  let harness: HarnessServer;
  let server: RunningServer;
  const upstreams: ScriptedUpstream[] = [];
  let upstream: ScriptedUpstream;
  let limited: ScriptedUpstream;
  const { api } = harborHttp(() => server.url);

  beforeAll(async () => {
    upstream = await startScriptedUpstream({
      replies: [
        { content: "I will total the revenue per region.", tool_calls: [{ function: { name: "bash", arguments: { command: SOLVE } } }] },
        { content: "The report is written to /app/report.csv." },
      ],
    });
    limited = await startScriptedUpstream({ replies: Array.from({ length: 5 }, () => ({ content: "again", tool_calls: [{ function: { name: "bash", arguments: { command: "true" } } }] })) });
    upstreams.push(upstream, limited);
    harness = await startHarnessServer("edgegym-harness-", [FIXTURES], { scripted: { url: upstream.url, apiKey: UPSTREAM_KEY }, limited: { url: limited.url } });
    server = harness.server;
  }, 300_000);
  afterAll(async () => {
    await harness?.close();
    for (const u of upstreams) await u.close();
  });

  const until = async (id: string, timeoutMs = 90_000): Promise<Json> => {
    const start = Date.now();
    for (;;) {
      const got = await api("GET", `/v1/episodes/${id}`);
      if (got.body.status !== "active" && got.body.agent?.status !== "running") return got.body;
      if (Date.now() - start > timeoutMs) throw new Error(`episode ${id} still active: ${JSON.stringify(got.body.agent)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  };

  it("runs the agent offline, records each call as a turn equal to what the upstream got and answered, and scores it with the task's tests", async () => {
    const reset = await api("POST", "/v1/envs/harbor/episodes", {
      args: { task: "offline-report" },
      agent: { command: agentCommand(), upstream: "scripted", model: "scripted-model-1", timeout_seconds: 120 },
    });
    expect(reset.status, JSON.stringify(reset.body)).toBe(201);
    const id = reset.body.episode_id as string;
    const endpoint = reset.body.model_endpoint;
    expect(endpoint.openai_base_url).toBe(`${server.url}/model/${id}/v1`);
    expect(endpoint.anthropic_base_url).toBe(`${server.url}/model/${id}`);
    expect(endpoint.api_key).toMatch(/^egk_/);

    const episode = await until(id);
    expect(episode.status).toBe("done");
    expect(episode.stop_reason).toBe("agent_exit");
    expect(episode.agent).toMatchObject({ status: "exited", exit_code: 0, calls: 2, upstream: "scripted", model: "scripted-model-1" });
    expect(episode.agent.output_tail).toContain("tiny agent: 4 messages");
    // One turn per call the upstream received, in order; each equal as JSON to what it got (edgegym sets the model and stream) and answered.
    const calls = episode.turns.filter((t: Json) => t.call);
    expect(calls).toHaveLength(2);
    expect(upstream.received).toHaveLength(2);
    calls.forEach((t: Json, i: number) => {
      expect(upstream.received[i]?.body).toEqual({ ...t.call.request, model: "scripted-model-1", stream: false });
      expect(t.call.response).toEqual(upstream.answered[i]);
      expect(t.call).toMatchObject({ wire: "chat", upstream: "scripted", model: "scripted-model-1", stream: false, status: 200, error: null });
      expect(t.sampled).toBeNull();
    });
    // The server's key went to the upstream only.
    expect(upstream.received[0]?.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    expect(JSON.stringify(episode)).not.toContain(UPSTREAM_KEY);
    // The agent sent its tool's output back: the count the task wants.
    expect(JSON.stringify(calls[1].call.request.messages)).toMatch(/"role":"tool"/);

    const score = await api("POST", `/v1/episodes/${id}/score`);
    expect(score.status, JSON.stringify(score.body)).toBe(200);
    expect(score.body.score.reward, JSON.stringify([score.body.score, calls[1].call.request.messages.at(-1)])).toBe(1);
    // Scored: its endpoint is closed.
    const late = await fetch(`${endpoint.openai_base_url}/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${endpoint.api_key}`, "content-type": "application/json" }, body: "{}" });
    expect(late.status).toBe(410);
  }, 180_000);

  it("keeps each episode's key to its own endpoint, and ends the episode on its call limit", async () => {
    const reset = await api("POST", "/v1/envs/harbor/episodes", {
      args: { task: "count-errors" },
      agent: { command: agentCommand(), upstream: "limited", model: "m", timeout_seconds: 120, limits: { max_calls: 1 } },
    });
    expect(reset.status, JSON.stringify(reset.body)).toBe(201);
    const id = reset.body.episode_id as string;
    const key = reset.body.model_endpoint.api_key as string;
    // No key, a made-up key, and this key on another episode's path: the same 401.
    const wrong = async (path: string, headers: Record<string, string>) =>
      (await fetch(`${server.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ model: "m", messages: [] }) })).status;
    expect(await wrong(`/model/${id}/v1/chat/completions`, {})).toBe(401);
    expect(await wrong(`/model/${id}/v1/chat/completions`, { authorization: "Bearer egk_made_up" })).toBe(401);
    expect(await wrong(`/model/ep_someone_else/v1/chat/completions`, { authorization: `Bearer ${key}` })).toBe(401);
    // The server's tenant routes do not take the episode key either.
    expect((await fetch(`${server.url}/v1/episodes/${id}`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200); // keyless server: open anyway

    const episode = await until(id);
    // The first call was answered (the script's first reply); the second found the limit used: the episode ended there.
    expect(episode.stop_reason).toBe("call_limit");
    expect(episode.truncated).toBe(true);
    expect(episode.turns.filter((t: Json) => t.call)).toHaveLength(1);
    expect(limited.received).toHaveLength(1);
    expect(episode.agent.status === "exited" || episode.agent.status === "stopped").toBe(true);
  }, 180_000);

  it("kills an agent that overruns its time and ends the episode with agent_timeout", async () => {
    const reset = await api("POST", "/v1/envs/harbor/episodes", { args: { task: "count-errors" }, agent: { command: "sleep 600", upstream: "scripted", model: "m", timeout_seconds: 2 } });
    expect(reset.status, JSON.stringify(reset.body)).toBe(201);
    const id = reset.body.episode_id as string;
    const episode = await until(id, 60_000);
    expect(episode.stop_reason).toBe("agent_timeout");
    expect(episode.agent).toMatchObject({ status: "timed_out", exit_code: null, calls: 0 });
    expect(episode.agent.seconds).toBeGreaterThanOrEqual(2);
    // The agent's processes are gone from the box (which stays until the episode is scored or closed).
    const box = execFileSync("docker", ["ps", "-q", "--filter", `label=edgegym.episode=${id}`], { encoding: "utf8" }).trim();
    expect(execFileSync("docker", ["exec", box, "sh", "-c", "ps -eo args | grep -c '^sleep 600' || true"], { encoding: "utf8" }).trim()).toBe("0");
    const closed = await api("DELETE", `/v1/episodes/${id}`);
    expect(closed.status).toBe(200);
  }, 120_000);

  it("refuses `agent` for an unknown upstream and on an environment without sandboxes, and steps and forks of a harness episode", async () => {
    const unknown = await api("POST", "/v1/envs/harbor/episodes", { args: { task: "count-errors" }, agent: { command: "true", upstream: "nope", model: "m", timeout_seconds: 5 } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toContain("scripted");
    const textEnv = await api("POST", "/v1/envs/reverse-text/episodes", { agent: { command: "true", upstream: "scripted", model: "m", timeout_seconds: 5 } });
    expect(textEnv.status).toBe(422);
    expect(textEnv.body.error.code).toBe("env_unavailable");
    // An offline task (`no-network`): its box goes on the internal network with an empty allowlist.
    const reset = await api("POST", "/v1/envs/harbor/episodes", { args: { task: "offline-report" }, agent: { command: "sleep 30", upstream: "scripted", model: "m", timeout_seconds: 30 } });
    const id = reset.body.episode_id as string;
    // Hostile bodies with the right key: too deep, not JSON, not an object, over the size limit; each refused before it is forwarded or counted.
    const post = async (body: string) => (await fetch(`${server.url}/model/${id}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${reset.body.model_endpoint.api_key}` }, body })).status;
    expect(await post("[".repeat(5000) + "]".repeat(5000))).toBe(400);
    expect(await post("{not json")).toBe(400);
    expect(await post("[1, 2]")).toBe(400);
    // Over 16 MiB: judged by its Content-Length, answered before the body is sent (a client still writing 17 MiB may see the connection cut instead).
    const tooBig = await new Promise<number>((resolve, reject) => {
      const req = request(`${server.url}/model/${id}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${reset.body.model_endpoint.api_key}`, "content-length": String(17 * 1024 * 1024) } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.flushHeaders();
    });
    expect(tooBig).toBe(413);
    // The offline box reaches the endpoint and nothing else: the proxy refuses any host, a direct connection goes nowhere.
    const box = execFileSync("docker", ["ps", "-q", "--filter", `label=edgegym.episode=${id}`], { encoding: "utf8" }).trim();
    const probe = [
      "import os, socket, urllib.request",
      "try:",
      "    urllib.request.urlopen('http://example.com/', timeout=5); print('proxy: open')",
      "except Exception as e: print('proxy:', getattr(e, 'code', type(e).__name__))",
      "s = socket.socket(); s.settimeout(3)",
      "try:",
      "    s.connect(('1.1.1.1', 80)); print('direct: open')",
      "except Exception as e: print('direct:', type(e).__name__)",
    ].join("\n");
    // Asynchronously: the proxy runs in this process, and a synchronous exec would keep it from answering.
    const seen = (await promisify(execFile)("docker", ["exec", box, "python3", "-c", probe], { encoding: "utf8", timeout: 30_000 })).stdout;
    expect(seen).toContain("proxy: 403");
    expect(seen).not.toContain("direct: open");
    const step = await api("POST", `/v1/episodes/${id}/step`, { turn: 0, message: { role: "assistant", content: "hi" } });
    expect(step.status).toBe(400);
    const early = await api("POST", `/v1/episodes/${id}/score`);
    expect(early.status).toBe(409);
    expect(early.body.error.code).toBe("agent_running");
    const fork = await api("POST", `/v1/episodes/${id}/fork`, {});
    expect(fork.status).toBe(409);
    expect(fork.body.error.details.reason).toBe("harness");
    expect((await api("DELETE", `/v1/episodes/${id}`)).status).toBe(200);
    // A closed episode's key is refused.
    const after = await fetch(`${reset.body.model_endpoint.openai_base_url}/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${reset.body.model_endpoint.api_key}`, "content-type": "application/json" }, body: "{}" });
    expect(after.status).toBe(410);
  }, 120_000);
});
