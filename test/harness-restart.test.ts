import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { databaseLabel } from "../src/server/node/harbor.js";
import { freePort } from "./support/child-server.js";
import { containersWith, dockerReady } from "./support/docker.js";
import { http, REPO_ROOT, startNodeServer, type ChildServer } from "./support/node-server.js";
import { startScriptedUpstream } from "./support/scripted-upstream.js";

/*
 * A harness episode outlives its server: the agent keeps running in its container while
 * `edgegym serve` is killed with SIGKILL; a new server on the same database (and the same
 * proxy port) watches it again, its next call reaches the same endpoint and is stored
 * after the first, and its exit ends the episode. No answered call is lost.
 */

const FIXTURES = join(REPO_ROOT, "test/fixtures/harbor-tasks");
const AGENT = readFileSync(join(REPO_ROOT, "test/fixtures/harness/tiny_agent.py")).toString("base64");
const ready = dockerReady();

describe.skipIf(!ready)("a harness episode across a kill -9 of its server", () => {
  const dir = mkdtempSync(join(tmpdir(), "edgegym-harness-restart-"));
  const db = join(dir, "edgegym.db");
  const servers: ChildServer[] = [];
  afterAll(async () => {
    for (const s of servers) await s.stop();
    for (const id of containersWith(`edgegym.db=${databaseLabel(db)}`)) execFileSync("docker", ["rm", "-f", id], { stdio: "ignore" });
    rmSync(dir, { recursive: true, force: true });
  });

  it("keeps the agent's endpoint and every answered call across the restart", async () => {
    // The first reply's command holds the agent in its tool while the server is killed and started again.
    const upstream = await startScriptedUpstream({
      replies: [
        { content: "Counting, slowly.", tool_calls: [{ function: { name: "bash", arguments: { command: "sleep 12; grep -cE '^[^ ]+ ERROR ' /var/log/service/service.log > /app/answer.txt" } } }] },
        { content: "Done." },
      ],
    });
    const port = await freePort();
    const env = { EDGEGYM_MODEL_UPSTREAMS: JSON.stringify({ scripted: { base_url: upstream.url } }), EDGEGYM_SANDBOX_EGRESS_PORT: String(port) };
    const start = async () => {
      const s = await startNodeServer({ db, args: ["--env", `harbor:${FIXTURES}`], env });
      servers.push(s);
      return s;
    };
    try {
      const first = await start();
      const reset = await http(`${first.url}/v1/envs/harbor/episodes`, "POST", {
        args: { task: "count-errors" },
        agent: { command: `printf '%s' '${AGENT}' | base64 -d > /tmp/a.py && python3 /tmp/a.py`, upstream: "scripted", model: "m", timeout_seconds: 180 },
      });
      expect(reset.status, JSON.stringify(reset.json)).toBe(201);
      const id = reset.json.episode_id as string;
      // The first call is answered, and therefore stored, before the agent runs its command.
      for (let i = 0; upstream.received.length < 1 && i < 300; i++) await new Promise((r) => setTimeout(r, 100));
      expect(upstream.received).toHaveLength(1);
      first.process.kill("SIGKILL");
      await new Promise((r) => first.process.once("exit", r));

      const second = await start();
      let episode: Record<string, any> = {}; // eslint-disable-line @typescript-eslint/no-explicit-any -- asserted field by field
      for (let i = 0; i < 600; i++) {
        episode = (await http(`${second.url}/v1/episodes/${id}`, "GET")).json;
        if (episode.status !== "active" && episode.agent?.status !== "running") break;
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(episode.stop_reason).toBe("agent_exit");
      expect(episode.agent).toMatchObject({ status: "exited", exit_code: 0, calls: 2 });
      expect(episode.turns.filter((t: { call?: unknown }) => t.call)).toHaveLength(2);
      expect(upstream.received).toHaveLength(2);
      const score = await http(`${second.url}/v1/episodes/${id}/score`, "POST");
      expect(score.json.score.reward).toBe(1);
      expect(containersWith(`edgegym.db=${databaseLabel(db)}`)).toEqual([]);
    } finally {
      await upstream.close();
    }
  }, 300_000);
});
