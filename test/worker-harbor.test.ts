import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChildServer } from "./support/child-server.js";
import { startDevWorker } from "./support/dev-worker.js";
import { dockerReady } from "./support/docker.js";
import { harborHttp, toolCall as call } from "./support/harbor-http.js";

/**
 * The Harbor fixtures on the Worker, as a user runs them: `EDGEGYM_HARBOR_TASKS=DIR npm run
 * dev:worker` builds a container class per task image and serves env `harbor`, one
 * Cloudflare Container per episode owned by its Durable Object. The vitest Workers plugin
 * disables containers, so this drives `wrangler dev` as a subprocess, with the local
 * Docker work-arounds the script applies (scripts/dev-worker/).
 */
const run = promisify(execFile);
const FIXTURES = join(import.meta.dirname, "fixtures", "harbor-tasks");
/** Each task's reward after its oracle, as the Node server scores it (test/harbor-node.test.ts): wrong-oracle's solution is wrong. */
const ORACLE_REWARD: Record<string, number> = { "count-errors": 1, "fix-median": 1, "wrong-oracle": 0 };
const TASKS = Object.keys(ORACLE_REWARD);
const WORKER_NAME = "edgegym";

/** The running app containers of this Worker's box classes (not their `-proxy` sidecars). */
async function boxContainers(): Promise<string[]> {
  const { stdout } = await run("docker", ["ps", "--format", "{{.Names}}", "--filter", `name=workerd-${WORKER_NAME}-HarborBox`], { timeout: 30_000 });
  return stdout.split("\n").filter((n) => n && !n.endsWith("-proxy"));
}

async function workerdContainers(): Promise<string[]> {
  const { stdout } = await run("docker", ["ps", "-a", "--format", "{{.Names}}", "--filter", `name=workerd-${WORKER_NAME}-`], { timeout: 30_000 });
  return stdout.split("\n").filter(Boolean);
}

/** The tool message of a step's reply. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- replies are asserted field by field
const toolText = (body: any): string => body.messages.find((m: { role: string }) => m.role === "tool")?.content ?? "";

const ready = dockerReady();

describe.skipIf(!ready)("Harbor tasks on the Worker (Cloudflare Containers under wrangler dev)", () => {
  let server: ChildServer | undefined;
  let baseUrl = "";
  let tasksDir = "";
  let stateDir = "";
  const { api, reset, step } = harborHttp(() => baseUrl);

  const oracle = async (id: string, task: string) => {
    const solve = readFileSync(join(FIXTURES, task, "solution/solve.sh"), "utf8");
    const ran = await step(id, 0, "Running the reference solution.", [call("write_file", { path: "/solution/solve.sh", content: solve }), call("bash", { command: "chmod +x /solution/solve.sh && /solution/solve.sh" })]);
    expect(ran.status, JSON.stringify(ran.body)).toBe(200);
    const done = await step(id, 1, "Done.");
    expect(done.status, JSON.stringify(done.body)).toBe(200);
  };

  beforeAll(async () => {
    tasksDir = mkdtempSync(join(tmpdir(), "edgegym-worker-harbor-"));
    for (const task of TASKS) cpSync(join(FIXTURES, task), join(tasksDir, task), { recursive: true });
    stateDir = mkdtempSync(join(tmpdir(), "edgegym-worker-harbor-state-"));
    // The first start builds the box server (Go, from Debian's packages) and the task images: minutes.
    ({ server, baseUrl } = await startDevWorker({ persistTo: stateDir, env: { EDGEGYM_HARBOR_TASKS: tasksDir }, startTimeoutMs: 900_000, stopGraceMs: 60_000 }));
  }, 960_000);

  afterAll(async () => {
    await server?.stop();
    // Only when a test failed before the last one checked it: this Worker's containers, by their names.
    const left = await workerdContainers().catch(() => []);
    if (left.length) await run("docker", ["rm", "-f", ...left], { timeout: 60_000 }).catch(() => undefined);
    if (tasksDir) rmSync(tasksDir, { recursive: true, force: true });
    if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  }, 120_000);

  it("lists the tasks and offers the same tools as on Node", async () => {
    const r = await reset("count-errors");
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.tools.map((t: { function: { name: string } }) => t.function.name).sort()).toEqual(["bash", "edit_file", "read_file", "write_file"]);
    const ran = await step(r.body.episode_id, 0, "Look around.", [call("bash", { command: "echo hello from $(id -un)" })]);
    expect(ran.status).toBe(200);
    expect(toolText(ran.body)).toMatch(/exit code: 0[\s\S]*hello from root/);
    expect((await api("DELETE", `/v1/episodes/${r.body.episode_id}`)).status).toBe(200);
  }, 120_000);

  it("scores each task's oracle as Node does (1, or 0 for the wrong one) and 0 without it", async () => {
    for (const task of TASKS) {
      const solved = await reset(task);
      expect(solved.status, JSON.stringify(solved.body)).toBe(201);
      await oracle(solved.body.episode_id, task);
      const score = await api("POST", `/v1/episodes/${solved.body.episode_id}/score`);
      expect(score.status, JSON.stringify(score.body)).toBe(200);
      expect(score.body.score.reward, `${task} with its oracle`).toBe(ORACLE_REWARD[task]);

      const idle = await reset(task);
      await step(idle.body.episode_id, 0, "I give up.");
      const zero = await api("POST", `/v1/episodes/${idle.body.episode_id}/score`);
      expect(zero.body.score.reward, `${task} without its oracle`).toBe(0);
    }
  }, 600_000);

  it("keeps two episodes' files apart, and a closed episode's container is gone", async () => {
    const before = (await boxContainers()).length;
    const a = await reset("count-errors");
    const b = await reset("count-errors");
    expect((await boxContainers()).length).toBe(before + 2);
    await step(a.body.episode_id, 0, "write", [call("write_file", { path: "/tmp/mine.txt", content: "episode a" })]);
    const read = await step(b.body.episode_id, 0, "read", [call("bash", { command: "cat /tmp/mine.txt" })]);
    expect(toolText(read.body)).toMatch(/No such file/);
    for (const episode of [a, b]) expect((await api("DELETE", `/v1/episodes/${episode.body.episode_id}`)).status).toBe(200);
    expect((await boxContainers()).length).toBe(before);
  }, 300_000);

  it("starts four cold boxes at once", async () => {
    const resets = await Promise.all(Array.from({ length: 4 }, () => reset("fix-median")));
    for (const r of resets) expect(r.status, JSON.stringify(r.body)).toBe(201);
    const ran = await Promise.all(resets.map((r, i) => step(r.body.episode_id, 0, "hi", [call("bash", { command: `echo box ${i}` })])));
    ran.forEach((r, i) => expect(toolText(r.body)).toContain(`box ${i}`));
    await Promise.all(resets.map((r) => api("DELETE", `/v1/episodes/${r.body.episode_id}`)));
  }, 300_000);

  it("refuses a fork, and a container that is gone ends the episode as sandbox_lost", async () => {
    const others = new Set(await boxContainers());
    const r = await reset("count-errors");
    const mine = (await boxContainers()).filter((name) => !others.has(name));
    expect(mine.length).toBe(1);
    const fork = await api("POST", `/v1/episodes/${r.body.episode_id}/fork`, {});
    expect(fork.status).toBe(409);
    expect(fork.body.error.code).toBe("fork_unavailable");
    expect(fork.body.error.details.reason).toBe("no_snapshot");
    // Its box dies as a crash would kill it.
    await run("docker", ["kill", ...mine], { timeout: 60_000 });
    const after = await step(r.body.episode_id, 0, "still there?", [call("bash", { command: "true" })]);
    expect(after.status, JSON.stringify(after.body)).toBe(200);
    expect(after.body.done).toBe(true);
    expect(after.body.stop_reason).toBe("sandbox_lost");
  }, 300_000);

  it("leaves no container behind once wrangler dev stops", async () => {
    await server?.stop();
    server = undefined;
    expect(await workerdContainers()).toEqual([]);
  }, 120_000);
});
