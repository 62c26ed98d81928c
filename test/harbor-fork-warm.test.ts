import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNodeServer, type RunningServer } from "../src/server/node/serve.js";
import { databaseLabel } from "../src/server/node/harbor.js";
import { containersWith, dockerReady } from "./support/docker.js";
import { harborHttp, toolCall, type Json } from "./support/harbor-http.js";
import { REPO_ROOT } from "./support/node-server.js";

/*
 * Forks of sandboxed episodes and the warm pool, over HTTP on the real Node server and a
 * real Docker daemon: a fork at the current turn starts each child from a snapshot of the
 * parent's container (identical files, then each its own), a fork at an earlier turn is
 * refused with its own reason, and a reset claims a started warm box by renaming it; no
 * container and no snapshot image is left behind.
 */

const FIXTURES = join(REPO_ROOT, "test/fixtures/harbor-tasks");
const ready = dockerReady();


function docker(...args: string[]): string {
  return execFileSync("docker", args, { encoding: "utf8", timeout: 30_000 }).trim();
}

/** Names of this database's containers of one role, as the docker CLI lists them. */
function namesOf(label: string, role: string): string[] {
  return docker("ps", "-a", "--filter", `label=${label}`, "--filter", `label=edgegym.role=${role}`, "--format", "{{.Names}}").split("\n").filter(Boolean);
}

async function until<T>(what: string, check: () => T | undefined | false, timeoutMs = 60_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const got = check();
    if (got) return got;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe.skipIf(!ready)("forks and warm boxes of Harbor episodes on Docker", () => {
  let dir: string;
  let server: RunningServer;
  let label: string;

  const { api, reset, step } = harborHttp(() => server.url);
  const bash = async (id: string, turn: number, command: string): Promise<string> => {
    const r = await step(id, turn, "", [toolCall("bash", { command })]);
    expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(200);
    return r.body.messages.find((m: Json) => m.role === "tool").content as string;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "edgegym-harbor-fork-"));
    const dbPath = join(dir, "edgegym.db");
    server = await startNodeServer({ port: 0, host: "127.0.0.1", dbPath, reapIntervalMs: 0, harborDirs: [FIXTURES], config: { sandboxMaxLive: 12, sandboxWarm: 1 } });
    label = `edgegym.db=${databaseLabel(dbPath)}`;
  }, 300_000);
  afterAll(async () => {
    // The last test stops it already; a second close of a stopped server is refused, which is fine here.
    await server?.close().catch(() => undefined);
    if (label) for (const id of containersWith(label)) docker("rm", "-f", id);
    rmSync(dir, { recursive: true, force: true });
  });

  it("a reset claims a started warm box (renamed for its episode), and the pool starts another", async () => {
    // One started warm box per task once the pools are primed (a box still starting is not claimed).
    const running = () => docker("ps", "--filter", `label=${label}`, "--filter", "label=edgegym.role=warm", "--filter", "status=running", "--format", "{{.Names}}").split("\n").filter((n) => n.startsWith("edgegym-warm-"));
    await until("a started warm box of each task", () => running().length >= 5 || undefined, 240_000);
    const before = new Set(namesOf(label, "warm"));
    const r = await reset("count-errors");
    expect(r.status).toBe(201);
    const id = r.body.episode_id as string;
    const claimed = namesOf(label, "warm").filter((n) => n.endsWith(`-${id}`));
    expect(claimed).toHaveLength(1);
    expect(claimed[0]).toMatch(/^edgegym-ep-[0-9a-f]{16}-[0-9a-f]{12}-ep_/);
    // It was one of the warm boxes: no new container was made for the reset.
    expect(namesOf(label, "episode")).toEqual([]);
    expect(await bash(id, 0, "cat /app/app.log | head -1; echo ok")).toMatch(/ok/);
    // The pool tops itself up with a fresh box under a new name.
    await until("a replacement warm box", () => namesOf(label, "warm").some((n) => n.startsWith("edgegym-warm-") && !before.has(n)) || undefined);
    await api("DELETE", `/v1/episodes/${id}`);
    expect(namesOf(label, "warm").filter((n) => n.endsWith(`-${id}`))).toEqual([]);
  }, 300_000);

  it("forks at the current turn from a snapshot of the container: children start with the parent's files and then diverge", async () => {
    const parent = await reset("count-errors");
    const pid = parent.body.episode_id as string;
    expect(await bash(pid, 0, "echo parent > /app/branch.txt && cat /app/branch.txt")).toMatch(/parent/);

    const fork = await api("POST", `/v1/episodes/${pid}/fork`, { n: 2 });
    expect(fork.status, JSON.stringify(fork.body)).toBe(201);
    const kids = fork.body.episodes.map((e: Json) => e.episode_id as string);
    expect(kids).toHaveLength(2);
    for (const kid of kids) expect(containersWith(`edgegym.episode=${kid}`)).toHaveLength(1);

    // Each child sees the parent's file as it was, then writes its own.
    for (const [i, kid] of kids.entries()) {
      expect(await bash(kid, 1, `cat /app/branch.txt; echo child-${i} > /app/branch.txt`)).toMatch(/parent/);
    }
    expect(await bash(kids[0], 2, "cat /app/branch.txt")).toMatch(/child-0/);
    expect(await bash(kids[1], 2, "cat /app/branch.txt")).toMatch(/child-1/);
    expect(await bash(pid, 1, "cat /app/branch.txt")).toMatch(/parent/);

    // An earlier turn cannot be rebuilt from a container: refused with its own reason.
    const early = await api("POST", `/v1/episodes/${pid}/fork`, { turn: 0 });
    expect(early.status).toBe(409);
    expect(early.body.error).toMatchObject({ code: "fork_unavailable", details: { reason: "resources_history" } });

    // The children's boxes go with them, and the snapshot image with the last one.
    for (const kid of kids) {
      await api("DELETE", `/v1/episodes/${kid}`);
      expect(containersWith(`edgegym.episode=${kid}`)).toEqual([]);
    }
    expect(docker("images", "-q", "--filter", `label=${label}`, "--filter", "label=edgegym.role=snapshot")).toBe("");
    await api("DELETE", `/v1/episodes/${pid}`);
  }, 300_000);

  it("a fork of an episode whose container is gone is sandbox_lost, and creates nothing", async () => {
    const r = await reset("count-errors");
    const id = r.body.episode_id as string;
    for (const box of namesOf(label, "warm").filter((n) => n.endsWith(`-${id}`))) docker("rm", "-f", box);
    for (const box of containersWith(`edgegym.episode=${id}`)) docker("rm", "-f", box);
    const fork = await api("POST", `/v1/episodes/${id}/fork`, { n: 2 });
    expect(fork.status).toBe(410);
    expect(fork.body.error.code).toBe("sandbox_lost");
    expect(namesOf(label, "episode")).toEqual([]);
    await api("DELETE", `/v1/episodes/${id}`);
  }, 120_000);

  it("leaves no unclaimed warm box, container or snapshot image once the server stops", async () => {
    await server.close();
    expect(containersWith(label)).toEqual([]);
    expect(docker("images", "-q", "--filter", `label=${label}`, "--filter", "label=edgegym.role=snapshot")).toBe("");
  }, 120_000);
});
