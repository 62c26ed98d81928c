import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { http, REPO_ROOT, startNodeServer, type ChildServer } from "./support/node-server.js";

// The real entry over real HTTP: the CLI, @hono/node-server, better-sqlite3 on a file.
describe("Node server over HTTP", () => {
  let dir: string;
  let server: ChildServer;
  const auth = { authorization: "Bearer sk-test" };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "edgegym-http-"));
    server = await startNodeServer({ db: join(dir, "edgegym.db"), env: { EDGEGYM_API_KEYS: "sk-test,sk-other" } });
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("drives a whole episode the way the README's curl session does", async () => {
    expect((await http(`${server.url}/health`, "GET")).json.status).toBe("ok");
    expect((await http(`${server.url}/v1/envs`, "GET")).status).toBe(401);
    const reset = await http(`${server.url}/v1/envs/reverse-text/episodes`, "POST", { split: "eval", index: 0 }, auth);
    expect(reset.status).toBe(201);
    const id = reset.json.episode_id;
    const text = reset.json.messages.at(-1).content as string;
    const reply = Array.from(text).reverse().join("");
    const step = await http(`${server.url}/v1/episodes/${id}/step`, "POST", { turn: 0, message: { role: "assistant", content: `<answer>${reply}</answer>` } }, auth);
    expect(step.json).toMatchObject({ turn: 1, done: true });
    const score = await http(`${server.url}/v1/episodes/${id}/score`, "POST", undefined, auth);
    expect(score.json.score.reward).toBeCloseTo(1.2, 10);
    expect(step.headers.get("x-request-id")).toMatch(/^req_/);
  });

  it("keeps episodes across a restart of the server on the same file", async () => {
    const reset = await http(`${server.url}/v1/envs/reverse-text/episodes`, "POST", { index: 1 }, auth);
    const id = reset.json.episode_id;
    await server.stop();
    server = await startNodeServer({ db: join(dir, "edgegym.db"), env: { EDGEGYM_API_KEYS: "sk-test" } });
    const episode = await http(`${server.url}/v1/episodes/${id}`, "GET", undefined, auth);
    expect(episode.json).toMatchObject({ episode_id: id, status: "active", turn: 0 });
    expect(episode.json.messages).toEqual(reset.json.messages);
  });

  it("reaps expired episodes in the background, without anyone asking", async () => {
    const db = join(dir, "reaper.db");
    const reaping = await startNodeServer({ db, env: { EDGEGYM_REAP_INTERVAL_SECONDS: "1" } });
    try {
      const reset = await http(`${reaping.url}/v1/envs/reverse-text/episodes`, "POST", { index: 2, ttl_seconds: 1 });
      const id = reset.json.episode_id as string;
      const status = () => {
        const sqlite = new Database(db, { readonly: true });
        try {
          return (sqlite.prepare("SELECT status FROM episodes WHERE id = ?").get(id) as { status: string }).status;
        } finally {
          sqlite.close();
        }
      };
      expect(status()).toBe("active");
      const deadline = Date.now() + 10_000;
      while (status() !== "expired" && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      expect(status()).toBe("expired");
      expect((await http(`${reaping.url}/v1/episodes/${id}`, "GET")).status).toBe(410);
    } finally {
      await reaping.stop();
    }
  });

  it("loses no episode when the process is killed mid-load (SIGKILL), and the episodes go on after a restart", async () => {
    const db = join(dir, "crash.db");
    const args = ["--env", join(REPO_ROOT, "test/fixtures/countdown-env.js")];
    let crashing = await startNodeServer({ db, args });
    const ids = await Promise.all(Array.from({ length: 8 }, () => http(`${crashing.url}/v1/envs/test-countdown/episodes`, "POST", {}).then((r) => r.json.episode_id as string)));
    const acknowledged = new Map<string, number>(ids.map((id) => [id, 0]));
    // Steps keep flowing while the process dies; only what was acknowledged is owed.
    const load = Promise.all(
      ids.map(async (id) => {
        for (let turn = 0; turn < 5; turn++) {
          try {
            const r = await http(`${crashing.url}/v1/episodes/${id}/step`, "POST", { turn, message: { role: "assistant", content: `t${turn}` } });
            if (r.status !== 200) return;
            acknowledged.set(id, turn + 1);
          } catch {
            return;
          }
        }
      }),
    );
    await new Promise((r) => setTimeout(r, 30));
    crashing.process.kill("SIGKILL");
    await load;
    crashing = await startNodeServer({ db, args });
    try {
      for (const id of ids) {
        const episode = await http(`${crashing.url}/v1/episodes/${id}`, "GET");
        expect(episode.status).toBe(200);
        const turn = episode.json.turn as number;
        expect(turn).toBeGreaterThanOrEqual(acknowledged.get(id)!);
        // The transcript is whole: one assistant message and one reply per turn taken.
        const assistants = episode.json.messages.filter((m: { role: string }) => m.role === "assistant");
        expect(assistants.map((m: { content: string }) => m.content)).toEqual(Array.from({ length: turn }, (_, t) => `t${t}`));
        if (turn < 5) {
          const next = await http(`${crashing.url}/v1/episodes/${id}/step`, "POST", { turn, message: { role: "assistant", content: `t${turn}` } });
          expect(next.status, next.text).toBe(200);
        }
      }
    } finally {
      await crashing.stop();
    }
  });
});

