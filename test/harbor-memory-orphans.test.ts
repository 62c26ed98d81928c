import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { containersWith, dockerReady } from "./support/docker.js";
import { http, REPO_ROOT, startNodeServer, type ChildServer } from "./support/node-server.js";

/*
 * A server on an in-memory database (`--db :memory:`) killed with SIGKILL: its episodes are
 * gone with it and no other server shares its database, so its boxes carry its pid and the
 * next server's start-up sweep (on any database) removes them. Found as a leak: a box of such
 * a server stayed up for hours.
 */

const FIXTURES = join(REPO_ROOT, "test/fixtures/harbor-tasks");
const ready = dockerReady();

describe.skipIf(!ready)("boxes of a dead in-memory server", () => {
  const dir = mkdtempSync(join(tmpdir(), "edgegym-memory-orphans-"));
  const servers: ChildServer[] = [];
  afterAll(async () => {
    for (const s of servers) await s.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("are removed by the next server's start-up sweep", async () => {
    const memory = await startNodeServer({ db: ":memory:", args: ["--env", `harbor:${FIXTURES}`] });
    servers.push(memory);
    const reset = await http(`${memory.url}/v1/envs/harbor/episodes`, "POST", { args: { task: "count-errors" } });
    expect(reset.status).toBe(201);
    const box = `edgegym.episode=${reset.json.episode_id as string}`;
    expect(containersWith(box)).toHaveLength(1);
    expect(containersWith(`edgegym.memory-owner=${memory.process.pid}`)).toHaveLength(1);
    memory.process.kill("SIGKILL");
    await new Promise((r) => memory.process.once("exit", r));

    servers.push(await startNodeServer({ db: join(dir, "other.db"), args: ["--env", `harbor:${FIXTURES}`] }));
    expect(containersWith(box)).toEqual([]);
  }, 180_000);
});
