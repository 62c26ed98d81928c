import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { databaseLabel } from "../src/server/node/harbor.js";
import { containersWith, dockerReady } from "./support/docker.js";
import { http, REPO_ROOT, startNodeServer, type ChildServer } from "./support/node-server.js";

/*
 * A sandboxed episode outlives its server: `edgegym serve --env harbor:DIR` is killed with
 * SIGKILL mid-episode, a new server on the same database takes the episode over (its next
 * step sees the files of the last answered one), and the start-up sweep removes the box of
 * an episode that expired meanwhile. Nothing is left at the end.
 */

const FIXTURES = join(REPO_ROOT, "test/fixtures/harbor-tasks");
const ready = dockerReady();
let callSeq = 0;
const bash = (command: string) => ({ id: `call_${++callSeq}`, type: "function", function: { name: "bash", arguments: JSON.stringify({ command }) } });

describe.skipIf(!ready)("a sandboxed episode across a kill -9 of its server", () => {
  const dir = mkdtempSync(join(tmpdir(), "edgegym-harbor-restart-"));
  const db = join(dir, "edgegym.db");
  const servers: ChildServer[] = [];
  const start = async () => {
    const s = await startNodeServer({ db, args: ["--env", `harbor:${FIXTURES}`] });
    servers.push(s);
    return s;
  };
  afterAll(async () => {
    for (const s of servers) await s.stop();
    for (const id of containersWith(`edgegym.db=${databaseLabel(db)}`)) await import("node:child_process").then((cp) => cp.execFileSync("docker", ["rm", "-f", id], { stdio: "ignore" }));
    rmSync(dir, { recursive: true, force: true });
  });

  it("reattaches the live episode's container, sweeps the expired one's, and leaves nothing", async () => {
    const first = await start();
    const live = await http(`${first.url}/v1/envs/harbor/episodes`, "POST", { args: { task: "count-errors" } });
    expect(live.status).toBe(201);
    const id = live.json.episode_id as string;
    const wrote = await http(`${first.url}/v1/episodes/${id}/step`, "POST", { turn: 0, message: { role: "assistant", content: "", tool_calls: [bash("echo kept-across-restart > /app/marker.txt")] } });
    expect(wrote.status).toBe(200);
    const doomed = await http(`${first.url}/v1/envs/harbor/episodes`, "POST", { args: { task: "wrong-oracle" }, ttl_seconds: 1 });
    expect(doomed.status).toBe(201);
    expect(containersWith(`edgegym.episode=${doomed.json.episode_id}`)).toHaveLength(1);

    first.process.kill("SIGKILL");
    await new Promise((r) => first.process.once("exit", r));
    await new Promise((r) => setTimeout(r, 1500)); // the short-lived episode is past its TTL

    const second = await start();
    // The expired episode's box went at start-up; the live one's is there and holds the last step's file.
    expect(containersWith(`edgegym.episode=${doomed.json.episode_id}`)).toHaveLength(0);
    expect(containersWith(`edgegym.episode=${id}`)).toHaveLength(1);
    const read = await http(`${second.url}/v1/episodes/${id}/step`, "POST", { turn: 1, message: { role: "assistant", content: "", tool_calls: [bash("cat /app/marker.txt")] } });
    expect(read.status).toBe(200);
    expect((read.json.messages as { role: string; content: string }[]).find((m) => m.role === "tool")?.content).toContain("kept-across-restart");

    expect((await http(`${second.url}/v1/episodes/${id}`, "DELETE")).status).toBe(200);
    expect(containersWith(`edgegym.db=${databaseLabel(db)}`)).toEqual([]);
  }, 240_000);
});
