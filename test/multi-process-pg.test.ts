import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EvalJob } from "../src/protocol/index.js";
import { http, REPO_ROOT, startNodeServer, type ChildServer } from "./support/node-server.js";
import { postgresMissing, startPostgres, type TestPostgres } from "./support/postgres.js";
import { reverseLastUser, startScriptedModel, type ScriptedModelServer } from "./support/scripted-model.js";

// No episode state lives in a process: server processes on different ports sharing one
// PostgreSQL database serve any step of any episode, a step raced on all of them is
// applied once, a process killed with SIGKILL loses no step it acknowledged, and an eval
// job it was running is taken over by another process once its lease lapses.
const missing = postgresMissing();
const envArgs = ["--env", join(REPO_ROOT, "test/fixtures/countdown-env.js")];
const say = (content: string) => ({ role: "assistant", content });

describe.skipIf(missing !== undefined)(`server processes on one PostgreSQL database${missing ? ` (skipped: ${missing})` : ""}`, () => {
  let postgres: TestPostgres;
  let url: string;
  let servers: ChildServer[] = [];
  const extra: ChildServer[] = [];

  beforeAll(async () => {
    // fsync off: the tests kill server processes, never PostgreSQL or the machine.
    postgres = await startPostgres({ settings: { fsync: "off" } });
    url = await postgres.createDatabase("shared");
    // Three processes starting together on a new database: migrations serialize on the advisory lock.
    servers = await Promise.all([0, 1, 2].map(() => startNodeServer({ db: url, args: envArgs })));
  }, 120_000);
  afterAll(async () => {
    for (const s of extra) s.process.kill("SIGKILL");
    await Promise.all(servers.map((s) => s.stop()));
    await postgres?.stop();
  });

  it("serves alternate steps of the same episodes from three processes", async () => {
    // The last seed is the largest a reset takes (and, unindexed, the task index too): int8 columns, not int4.
    const seeds = [0, 1, 2 ** 32 - 1];
    for (let e = 0; e < 3; e++) {
      const reset = await http(`${servers[e]?.url}/v1/envs/test-countdown/episodes`, "POST", { seed: seeds[e] });
      expect(reset.status, reset.text).toBe(201);
      const id = reset.json.episode_id as string;
      let turn = 0;
      let done = false;
      while (!done) {
        const server = servers[(e + turn + 1) % 3] as ChildServer;
        const step = await http(`${server.url}/v1/episodes/${id}/step`, "POST", { turn, message: say(`step ${turn}`) });
        expect(step.status, step.text).toBe(200);
        expect(step.json.messages[0].content).toBe(`${4 - turn} left`);
        done = step.json.done;
        turn = step.json.turn;
      }
      expect(turn).toBe(5);
      for (const s of servers) {
        const episode = await http(`${s.url}/v1/episodes/${id}`, "GET");
        expect(episode.json.messages.filter((m: { role: string }) => m.role === "assistant").map((m: { content: string }) => m.content)).toEqual([0, 1, 2, 3, 4].map((t) => `step ${t}`));
      }
    }
  });

  it("applies a step once when the same step races on all three", async () => {
    const ids = await Promise.all(Array.from({ length: 8 }, (_, i) => http(`${servers[i % 3]?.url}/v1/envs/test-countdown/episodes`, "POST", {}).then((r) => r.json.episode_id as string)));
    for (const id of ids) {
      const same = await Promise.all(servers.map((s) => http(`${s.url}/v1/episodes/${id}/step`, "POST", { turn: 0, message: say("same") })));
      expect(same.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(new Set(same.map((r) => r.text)).size).toBe(1);
      const different = await Promise.all(servers.map((s, i) => http(`${s.url}/v1/episodes/${id}/step`, "POST", { turn: 1, message: say(`other ${i}`) })));
      expect(different.map((r) => r.status).sort()).toEqual([200, 409, 409]);
      const episode = await http(`${servers[0]?.url}/v1/episodes/${id}`, "GET");
      expect(episode.json.turn).toBe(2);
      expect(episode.json.messages.filter((m: { role: string }) => m.role === "assistant")).toHaveLength(2);
    }
    // In the database: one turn row per turn, whatever raced.
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query("SELECT episode_id, count(*)::int AS n, max(turn) AS top FROM episode_turns WHERE episode_id = ANY($1) GROUP BY episode_id", [ids]);
      expect(rows).toHaveLength(ids.length);
      for (const r of rows) expect([r.n, r.top]).toEqual([3, 2]);
    } finally {
      await client.end();
    }
  });

  it("loses no acknowledged step when a process is killed with SIGKILL mid-load", async () => {
    const victim = await startNodeServer({ db: url, args: envArgs });
    extra.push(victim);
    const acknowledged: { id: string; turn: number; message: unknown; text: string }[] = [];
    let killed = false;
    // Sixteen clients step their episodes as fast as the victim answers; a finished episode is followed by a new one.
    const client = async (c: number): Promise<void> => {
      while (!killed) {
        let id: string;
        try {
          const reset = await http(`${victim.url}/v1/envs/test-countdown/episodes`, "POST", { seed: c });
          if (reset.status !== 201) return;
          id = reset.json.episode_id as string;
        } catch {
          return;
        }
        for (let turn = 0; turn < 5 && !killed; turn++) {
          const message = say(`${id} turn ${turn}`);
          try {
            const step = await http(`${victim.url}/v1/episodes/${id}/step`, "POST", { turn, message });
            if (step.status !== 200) return;
            acknowledged.push({ id, turn, message, text: step.text });
          } catch {
            return; // the connection died with the process: not acknowledged
          }
        }
      }
    };
    const load = Promise.all(Array.from({ length: 16 }, (_, c) => client(c)));
    const deadline = Date.now() + 20_000;
    while (acknowledged.length < 200 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    victim.process.kill("SIGKILL");
    killed = true;
    await load;
    expect(acknowledged.length).toBeGreaterThanOrEqual(50);
    // Every acknowledged step is stored: a retry elsewhere is answered with the same bytes.
    for (const [i, a] of acknowledged.entries()) {
      const server = servers[i % 3] as ChildServer;
      const retry = await http(`${server.url}/v1/episodes/${a.id}/step`, "POST", { turn: a.turn, message: a.message });
      expect(retry.status, retry.text).toBe(200);
      expect(retry.text).toBe(a.text);
    }
    // And each episode is at least at the last turn acknowledged.
    const last = new Map<string, number>();
    for (const a of acknowledged) last.set(a.id, Math.max(last.get(a.id) ?? 0, a.turn + 1));
    for (const [id, turn] of last) {
      const episode = await http(`${servers[0]?.url}/v1/episodes/${id}`, "GET");
      expect(episode.json.turn).toBeGreaterThanOrEqual(turn);
    }
  }, 90_000);

  describe("eval jobs", () => {
    let model: ScriptedModelServer;
    // The model answers three requests, then holds every later one until the test opens
    // the gate: the job is certainly mid-run, on the first process, when that is killed.
    let openGate: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    beforeAll(async () => {
      model = await startScriptedModel(async (req, n) => {
        if (n > 3) await gate;
        return reverseLastUser(req, n);
      });
    });
    afterAll(async () => {
      await model?.close();
    });

    it("resume on another process after the one running them is killed", async () => {
      const evalsUrl = await postgres.createDatabase("evals");
      const env = { EDGEGYM_EVAL_BASE_URL: model.baseUrl, EDGEGYM_EVAL_API_KEY: "sk-x", EDGEGYM_EVAL_LEASE_SECONDS: "1" };
      const first = await startNodeServer({ db: evalsUrl, env });
      extra.push(first);
      const created = await http(`${first.url}/v1/evals`, "POST", { env_id: "reverse-text", model: "m", num_examples: 10, rollouts_per_example: 1, max_concurrent: 2 });
      expect(created.status, created.text).toBe(201);
      const id = created.json.eval_id as string;
      const job = async (server: ChildServer): Promise<EvalJob> => (await http(`${server.url}/v1/evals/${id}`, "GET")).json as EvalJob;
      const progressDeadline = Date.now() + 30_000;
      while ((await job(first)).progress.done < 3 && Date.now() < progressDeadline) await new Promise((r) => setTimeout(r, 50));
      // The second process starts beside the first while the first holds the job.
      const second = await startNodeServer({ db: evalsUrl, env });
      extra.push(second);
      const db = new pg.Client({ connectionString: evalsUrl });
      await db.connect();
      try {
        const owner = async () => (await db.query("SELECT lease_owner FROM eval_jobs WHERE id = $1", [id])).rows[0]?.lease_owner as string | null;
        const ownerBefore = await owner();
        expect(ownerBefore).toBeTruthy();
        first.process.kill("SIGKILL");
        await new Promise((r) => first.process.once("exit", r));
        openGate();
        let state = await job(second);
        const doneAtKill = state.progress.done;
        const until = Date.now() + 40_000;
        while (state.status !== "completed" && Date.now() < until) {
          await new Promise((r) => setTimeout(r, 100));
          state = await job(second);
        }
        expect(state).toMatchObject({ status: "completed", progress: { total: 10, done: 10, errors: 0 } });
        expect(doneAtKill).toBeGreaterThanOrEqual(3);
        const lines = (await (await fetch(`${second.url}/v1/evals/${id}/results`)).text()).trim().split("\n");
        expect(lines.map((l) => JSON.parse(l).example_id)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        // Finished by the second process (the first was dead), every rollout stored once.
        const rows = await db.query("SELECT count(*)::int AS n, count(DISTINCT example_id)::int AS d FROM eval_rollouts WHERE job_id = $1", [id]);
        expect(rows.rows[0]).toEqual({ n: 10, d: 10 });
        const finished = await db.query("SELECT run_ms, lease_owner FROM eval_jobs WHERE id = $1", [id]);
        expect(finished.rows[0]?.lease_owner).toBeNull();
        expect(await owner()).toBeNull();
      } finally {
        await db.end();
        await second.stop();
      }
    }, 90_000);
  });
});
