import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { http, REPO_ROOT, startNodeServer, type ChildServer } from "./support/node-server.js";

// No episode state lives in a process: two servers on one SQLite file (WAL) serve
// alternate steps of the same episodes, and a step raced on both is applied once.
describe("two server processes on one SQLite file", () => {
  let dir: string;
  let a: ChildServer;
  let b: ChildServer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "edgegym-two-"));
    const db = join(dir, "shared.db");
    const envArgs = ["--env", join(REPO_ROOT, "test/fixtures/countdown-env.js")];
    [a, b] = await Promise.all([startNodeServer({ db, args: envArgs }), startNodeServer({ db, args: envArgs })]);
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves alternate steps of one episode from alternate processes", async () => {
    const reset = await http(`${a.url}/v1/envs/test-countdown/episodes`, "POST", { seed: 5 });
    expect(reset.status).toBe(201);
    const id = reset.json.episode_id;
    const servers = [a, b];
    let done = false;
    let turn = 0;
    while (!done) {
      const server = servers[turn % 2] as ChildServer;
      const step = await http(`${server.url}/v1/episodes/${id}/step`, "POST", { turn, message: { role: "assistant", content: `step ${turn}` } });
      expect(step.status, step.text).toBe(200);
      expect(step.json.messages[0].content).toBe(`${4 - turn} left`);
      done = step.json.done;
      turn = step.json.turn;
    }
    expect(turn).toBe(5);
    const fromB = await http(`${b.url}/v1/episodes/${id}`, "GET");
    expect(fromB.json.messages.filter((m: { role: string }) => m.role === "assistant")).toHaveLength(5);
  });

  it("applies a step once when the same step races on both processes", async () => {
    const ids = await Promise.all(Array.from({ length: 10 }, () => http(`${a.url}/v1/envs/test-countdown/episodes`, "POST", {}).then((r) => r.json.episode_id as string)));
    for (const id of ids) {
      const message = { role: "assistant", content: "same" };
      const [ra, rb] = await Promise.all([a, b].map((s) => http(`${s.url}/v1/episodes/${id}/step`, "POST", { turn: 0, message })));
      expect([ra?.status, rb?.status]).toEqual([200, 200]);
      expect(ra?.text).toBe(rb?.text);
      const different = await Promise.all([a, b].map((s, i) => http(`${s.url}/v1/episodes/${id}/step`, "POST", { turn: 1, message: { role: "assistant", content: `other ${i}` } })));
      const statuses = different.map((r) => r.status).sort();
      expect(statuses).toEqual([200, 409]);
      const episode = await http(`${a.url}/v1/episodes/${id}`, "GET");
      expect(episode.json.turn).toBe(2);
    }
  });

  it("serves one port from several processes with --workers", async () => {
    const db = join(dir, "workers.db");
    const server = await startNodeServer({ db, args: ["--workers", "2", "--env", join(REPO_ROOT, "test/fixtures/countdown-env.js")] });
    try {
      const reset = await http(`${server.url}/v1/envs/test-countdown/episodes`, "POST", { seed: 9 });
      let turn = 0;
      for (; turn < 5; turn++) {
        const step = await http(`${server.url}/v1/episodes/${reset.json.episode_id}/step`, "POST", { turn, message: { role: "assistant", content: "x" } });
        expect(step.status, step.text).toBe(200);
      }
      const deadline = Date.now() + 10_000;
      // Both workers log once listening; either may be the last to start (worker 1 reaps first).
      while (!(/worker 1\b/.test(server.output()) && /worker 2\b/.test(server.output())) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(server.output()).toMatch(/2 worker processes/);
      expect(server.output()).toMatch(/worker 1/);
      expect(server.output()).toMatch(/worker 2/);
    } finally {
      await server.stop();
    }
  });
});

