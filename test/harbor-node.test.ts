import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNodeServer, type RunningServer } from "../src/server/node/serve.js";
import { databaseLabel } from "../src/server/node/harbor.js";
import { containersWith, dockerReady } from "./support/docker.js";
import { harborHttp, toolCall, type Json } from "./support/harbor-http.js";
import { REPO_ROOT } from "./support/node-server.js";

/*
 * The `harbor` environment over HTTP on the real Node server and a real Docker daemon:
 * edgegym's five fixture tasks (test/fixtures/harbor-tasks), each driven by its oracle
 * (solution/solve.sh sent through the write_file and bash tools, as any agent would) and
 * without it; the typed failures; admission; and no container left behind.
 */

const FIXTURES = join(REPO_ROOT, "test/fixtures/harbor-tasks");
const ready = dockerReady();

const call = toolCall;

describe.skipIf(!ready)("harbor tasks on Docker, over HTTP", () => {
  let dir: string;
  let dbPath: string;
  let server: RunningServer;
  let label: string;

  const { api, reset, step } = harborHttp(() => server.url);
  /** Harbor's oracle, as an agent: solve.sh written into the box and run with bash; then a final message. */
  const oracle = async (id: string, task: string) => {
    const solve = readFileSync(join(FIXTURES, task, "solution/solve.sh"), "utf8");
    const ran = await step(id, 0, "Running the reference solution.", [call("write_file", { path: "/solution/solve.sh", content: solve }), call("bash", { command: "chmod +x /solution/solve.sh && /solution/solve.sh" })]);
    expect(ran.status).toBe(200);
    const done = await step(id, 1, "Done.");
    expect(done.body.done).toBe(true);
    return ran;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "edgegym-harbor-"));
    dbPath = join(dir, "edgegym.db");
    server = await startNodeServer({ port: 0, host: "127.0.0.1", dbPath, reapIntervalMs: 0, harborDirs: [FIXTURES], config: { sandboxMaxLive: 4 } });
    label = `edgegym.db=${databaseLabel(dbPath)}`;
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    // Whatever a failed test left, so the machine stays clean; the last test checks nothing was left.
    if (label) for (const id of containersWith(label)) execFileSync("docker", ["rm", "-f", id], { stdio: "ignore" });
    rmSync(dir, { recursive: true, force: true });
  });

  it("lists the harbor environment and resets a task into its own container, with the instruction and the four tools", async () => {
    const envs = await api("GET", "/v1/envs");
    expect(envs.body.envs.map((e: Json) => e.id)).toContain("harbor");
    const r = await reset("count-errors");
    expect(r.status).toBe(201);
    expect(r.body.messages.at(-1).content).toMatch(/ERROR/);
    expect(r.body.tools.map((t: Json) => t.function.name)).toEqual(["bash", "read_file", "write_file", "edit_file"]);
    expect(containersWith(`edgegym.episode=${r.body.episode_id}`)).toHaveLength(1);
    const ls = await step(r.body.episode_id, 0, "", [call("bash", { command: "pwd; echo to-stderr >&2; exit 3" })]);
    const tool = ls.body.messages.find((m: Json) => m.role === "tool");
    expect(tool.content).toMatch(/^exit code: 3\n/);
    expect(tool.content).toContain("/app");
    expect(tool.content).toContain("to-stderr");
    await api("DELETE", `/v1/episodes/${r.body.episode_id}`);
    expect(containersWith(`edgegym.episode=${r.body.episode_id}`)).toHaveLength(0);
  }, 180_000);

  it("scores 1 after the oracle and 0 without it; the container is gone once scored", async () => {
    for (const task of ["count-errors", "fix-median"]) {
      const solved = await reset(task);
      await oracle(solved.body.episode_id, task);
      const score = await api("POST", `/v1/episodes/${solved.body.episode_id}/score`);
      expect(score.status).toBe(200);
      expect(score.body.score.reward, `${task} with its oracle`).toBe(1);
      expect(containersWith(`edgegym.episode=${solved.body.episode_id}`)).toHaveLength(0);

      const idle = await reset(task);
      expect((await step(idle.body.episode_id, 0, "I give up.")).body.done).toBe(true);
      const zero = await api("POST", `/v1/episodes/${idle.body.episode_id}/score`);
      expect(zero.body.score.reward, `${task} without its oracle`).toBe(0);
      expect(zero.body.score.components[0].error).toBeUndefined();
    }
  }, 300_000);

  it("reports the tests' own detail: reward.json's other keys and the CTRF counts", async () => {
    const r = await reset("fix-median");
    await oracle(r.body.episode_id, "fix-median");
    const score = await api("POST", `/v1/episodes/${r.body.episode_id}/score`);
    expect(score.body.score.metrics).toMatchObject({ tests_passed: 6, tests_failed: 0, commands: 1 });
  }, 180_000);

  it("runs a no-network task with no network at all, and a wrong oracle scores 0", async () => {
    const offline = await reset("offline-report");
    await oracle(offline.body.episode_id, "offline-report");
    expect((await api("POST", `/v1/episodes/${offline.body.episode_id}/score`)).body.score.reward).toBe(1);

    const wrong = await reset("wrong-oracle");
    await oracle(wrong.body.episode_id, "wrong-oracle");
    expect((await api("POST", `/v1/episodes/${wrong.body.episode_id}/score`)).body.score.reward).toBe(0);
  }, 300_000);

  it("a verifier past its time limit is a typed failure, not a zero the agent earned", async () => {
    const r = await reset("slow-verifier");
    await oracle(r.body.episode_id, "slow-verifier");
    const score = await api("POST", `/v1/episodes/${r.body.episode_id}/score`);
    expect(score.body.score.reward).toBe(0);
    expect(score.body.score.components[0].error).toMatch(/^verifier_timeout: /);
  }, 180_000);

  it("a container that is gone ends the episode with sandbox_lost, never a silent fresh start", async () => {
    const r = await reset("count-errors");
    for (const id of containersWith(`edgegym.episode=${r.body.episode_id}`)) execFileSync("docker", ["rm", "-f", id], { stdio: "ignore" });
    const s = await step(r.body.episode_id, 0, "", [call("bash", { command: "ls" })]);
    expect(s.status).toBe(200);
    expect(s.body.messages.find((m: Json) => m.role === "tool").content).toMatch(/sandbox_lost/);
    expect(s.body).toMatchObject({ done: true, stop_reason: "sandbox_lost" });
  }, 120_000);

  it("refuses a reset past the live-sandbox cap with 429 and Retry-After, and a fork past it too", async () => {
    const a = await reset("count-errors");
    const held = [a.body.episode_id as string];
    let refused: { status: number; headers: Headers; body: Json } | undefined;
    for (let i = 0; i < 5 && !refused; i++) {
      const r = await reset("count-errors");
      if (r.status === 201) held.push(r.body.episode_id);
      else refused = r;
    }
    expect(refused?.status).toBe(429);
    expect(refused?.headers.get("retry-after")).toBe("5");
    expect(refused?.body.error.details).toMatchObject({ quota: "sandboxes", limit: 4 });
    // A fork makes boxes too: at the cap it is refused the same way, before any snapshot.
    const fork = await api("POST", `/v1/episodes/${a.body.episode_id}/fork`, { n: 2 });
    expect(fork.status).toBe(429);
    expect(fork.body.error.details).toMatchObject({ quota: "sandboxes", limit: 4 });
    for (const id of held) await api("DELETE", `/v1/episodes/${id}`);
  }, 180_000);

  it("refuses hostile arguments before anything runs: an unknown, oversized or mistyped task, and tool calls out of bounds", async () => {
    for (const task of ["no-such-task", "x".repeat(301), 42, "../count-errors"]) {
      const r = await api("POST", "/v1/envs/harbor/episodes", { args: { task } });
      expect(r.status, JSON.stringify(task).slice(0, 40)).toBe(422);
      expect(r.body.error.code).toBe("invalid_env_args");
    }
    const r = await reset("count-errors");
    const id = r.body.episode_id as string;
    const bad = await step(id, 0, "", [
      call("bash", { command: "touch /app/ran-1", timeout_sec: 99_999 }),
      call("bash", { command: 123 }),
      call("read_file", { path: "x".repeat(5000) }),
      call("bash", { command: "head -c 1000000 /dev/zero | tr '\\0' a" }),
    ]);
    const tools = bad.body.messages.filter((m: Json) => m.role === "tool").map((m: Json) => m.content as string);
    expect(tools.slice(0, 3).every((t: string) => t.startsWith("Error"))).toBe(true);
    // A megabyte of output comes back cut, with a note saying so.
    expect(tools[3].length).toBeLessThan(20_000);
    expect(tools[3]).toMatch(/\[output cut: the first 16384 of 1000000 bytes are shown\]$/);
    const check = await step(id, 1, "", [call("bash", { command: "ls /app/ran-1 2>&1; true" })]);
    expect(check.body.messages.find((m: Json) => m.role === "tool").content).toMatch(/No such file/);
    await api("DELETE", `/v1/episodes/${id}`);
  }, 120_000);

  it("leaves no container behind", () => {
    expect(containersWith(label)).toEqual([]);
  });
});
