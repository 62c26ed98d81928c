import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { builtinEnvs, EnvRegistry, type AnyEnvironment } from "../envs/index.js";
import { readTranscript, ticTacToeExpertMove } from "../envs/builtin/tic-tac-toe/expert.js";
import { contentText, EvalRequest, EvalRollout, type ChatMessage } from "../protocol/index.js";
import { inProcessApp } from "../../test/support/in-process.js";
import { startScriptedModel, type ScriptedModelServer, type ScriptedPolicy } from "../../test/support/scripted-model.js";
import type { EpisodeDriver } from "./driver.js";
import { HttpDriver } from "./http-driver.js";
import { InProcessDriver } from "./in-process-driver.js";
import { evalToDir, type EvalToDirOptions } from "./node/eval-to-dir.js";
import { formatReport } from "./node/report.js";
import { formatRescoreReport, rescoreRunDir } from "./node/rescore-command.js";
import { readMetadata, readResults, readRunRollouts, RESULTS_FILE, TRACES_FILE } from "./node/run-dir.js";
import { OpenAIChatModel } from "./openai-model.js";
import { parseSeatsFlag, resolveRunSeats, rolloutSeats } from "./seats.js";
import { selectForSft } from "./sft.js";
import { runRollouts } from "../../test/support/eval-run.js";

const registry = new EnvRegistry("node", builtinEnvs);
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()?.();
});

async function model(policy: ScriptedPolicy): Promise<ScriptedModelServer> {
  const server = await startScriptedModel(policy);
  cleanup.push(() => server.close());
  return server;
}

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "edgegym-seated-"));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** An HTTP driver over a whole in-process server (SQLite in memory). */
function httpDriver(): EpisodeDriver {
  const server = inProcessApp();
  cleanup.push(() => server.close());
  return new HttpDriver({ baseUrl: "http://edgegym.test", retry: { maxRetries: 0 }, fetch: (input, init) => Promise.resolve(server.app.request(String(input), init)) });
}

/** The perfect player, thinking aloud about the mark it plays: its text must never reach the other seat. */
const expert: ScriptedPolicy = (req) => {
  const { mark } = readTranscript(req.messages);
  return { content: `<think>secret plan of ${mark}</think>${ticTacToeExpertMove(req.messages)}` };
};

/** Takes the lowest free cell: loses to minimax. */
const naive: ScriptedPolicy = (req) => {
  const { board } = readTranscript(req.messages);
  return { content: `<move>${board.findIndex((c) => c === null) + 1}</move>` };
};

const marksIn = (messages: readonly ChatMessage[]): Set<string> => new Set(messages.flatMap((m) => [...contentText(m.content).matchAll(/You play ([XO])\b/g)].map((x) => x[1] as string)));

function options(server: ScriptedModelServer, outputBase: string, request: Partial<EvalRequest>, extra: Partial<EvalToDirOptions> = {}): EvalToDirOptions {
  return {
    request: { ...EvalRequest.parse({ env_id: "tic-tac-toe-2p", num_examples: 2, rollouts_per_example: 2, max_concurrent: 2, ...request }), model: "org/scripted" },
    baseUrl: server.baseUrl,
    registry,
    outputBase,
    retryBaseDelayMs: 1,
    ...extra,
  };
}

describe("evaluating a seated environment", () => {
  for (const [where, driver] of [["in-process", () => new InProcessDriver(registry)], ["over HTTP", httpDriver]] as const) {
    it(`self-play ${where}: the model plays both seats, each seat's conversation kept apart, a score per seat`, async () => {
      const server = await model(expert);
      const chat = new OpenAIChatModel({ model: "scripted", baseUrl: server.baseUrl, timeoutMs: 10_000 });
      const d = driver();
      const seats = resolveRunSeats(await d.describe("tic-tac-toe-2p"), undefined);
      expect(seats).toEqual({ x: "client", o: "client" });
      const specs = [0, 1, 2].map((i) => ({ example: { index: i, split: "train" as const, prompt: [], answer: null, info: {} }, rolloutIndex: 0, seed: 100 + i }));
      const rows = await runRollouts({ envId: "tic-tac-toe-2p", driver: d, model: chat, specs });
      expect(rows).toHaveLength(3);
      // Every model request holds one seat's conversation, and never the other seat's text.
      for (const req of server.requests) {
        const marks = marksIn(req.messages);
        expect(marks.size).toBe(1);
        const other = marks.has("X") ? "O" : "X";
        expect(JSON.stringify(req.messages)).not.toContain(`secret plan of ${other}`);
      }
      for (const row of rows) {
        expect(EvalRollout.parse(row)).toBeTruthy();
        expect(row.error).toBeNull();
        expect(row.stop_condition).toBe("game_over");
        const bySeat = rolloutSeats(row);
        expect(Object.keys(bySeat ?? {})).toEqual(["x", "o"]);
        // Perfect play on both sides is a draw.
        expect(bySeat?.x?.metrics).toMatchObject({ draw: 1, win: 0, loss: 0 });
        expect(bySeat?.o?.metrics).toMatchObject({ draw: 1, win: 0, loss: 0 });
        expect(bySeat?.x?.player).toBe("client");
        const x = [...(bySeat?.x?.prompt ?? []), ...(bySeat?.x?.completion ?? [])];
        const o = [...(bySeat?.o?.prompt ?? []), ...(bySeat?.o?.completion ?? [])];
        expect(marksIn(x)).toEqual(new Set(["X"]));
        expect(marksIn(o)).toEqual(new Set(["O"]));
        expect(JSON.stringify(o)).not.toContain("secret plan of X");
        expect(JSON.stringify(x)).not.toContain("secret plan of O");
        // Both seats end with the result, the one that did not move last included.
        expect(contentText(x.at(-1)?.content ?? "")).toMatch(/draw/);
        expect(contentText(o.at(-1)?.content ?? "")).toMatch(/draw/);
        expect(x.filter((m) => m.role === "assistant")).toHaveLength(bySeat?.x?.metrics.moves ?? -1);
        // The top level is the first model seat's, as the score's top level is.
        expect(row.prompt).toEqual(bySeat?.x?.prompt);
        expect(row.completion).toEqual(bySeat?.x?.completion);
        expect(row.reward).toBe(bySeat?.x?.reward);
        expect(row.finish_reasons).toHaveLength(9);
      }
    });
  }

  it("the in-process driver and the server show a seat the same opening, replies and conversation", async () => {
    const local = new InProcessDriver(registry);
    const http = httpDriver();
    const request = { seed: 5, seats: { x: "minimax" } };
    const [a, b] = [await http.reset("tic-tac-toe-2p", request, "k"), await local.reset("tic-tac-toe-2p", request, "k")];
    expect({ messages: b.messages, to_play: b.to_play, done: b.done }).toEqual({ messages: a.messages, to_play: a.to_play, done: a.done });
    expect(a.to_play).toBe("o");
    const move = { role: "assistant" as const, content: ticTacToeExpertMove(a.messages) };
    const [sa, sb] = [await http.step(a.episode_id, { turn: 0, message: move }), await local.step(b.episode_id, { turn: 0, message: move })];
    const pick = ({ turn, messages, done, stop_reason, truncated, to_play }: typeof sa) => ({ turn, messages, done, stop_reason, truncated, to_play });
    expect(pick(sb)).toEqual(pick(sa));
    expect(sa.to_play).toBe("o");
    expect(await local.seatView?.(b.episode_id, "o")).toEqual(await http.seatView?.(a.episode_id, "o"));
    // The environment's seat's view waits for the end of the game on the server (it may hold hidden information).
    await expect(http.seatView?.(a.episode_id, "x")).rejects.toThrow(/seat_not_client/);
  });

  it("plays the model's seat against the environment's policy and counts wins, draws and losses per seat", async () => {
    const server = await model(naive);
    const base = tempDir();
    const notes: string[] = [];
    const result = await evalToDir(options(server, base, { num_examples: 3, rollouts_per_example: 2 }, { seats: { o: "minimax" }, note: (l) => notes.push(l) }));
    expect(result.status).toBe("completed");
    expect(result.seats).toEqual({ x: "client", o: "minimax" });
    expect(notes.join("\n")).toMatch(/seats: x=client o=minimax/);
    const { rows } = await readResults<EvalRollout>(join(result.runDir, RESULTS_FILE));
    expect(rows).toHaveLength(6);
    // Only x was the model's: every request is X's, and o's conversation is not recorded.
    for (const req of server.requests) expect(marksIn(req.messages)).toEqual(new Set(["X"]));
    for (const row of rows) {
      const bySeat = rolloutSeats(row);
      expect(bySeat?.o?.player).toBe("minimax");
      expect(bySeat?.o?.completion).toBeUndefined();
      expect(bySeat?.x?.metrics.loss).toBe(1);
      expect(bySeat?.o?.metrics.win).toBe(1);
    }
    const meta = await readMetadata(result.runDir);
    expect(meta.seats).toEqual({ x: "client", o: "minimax" });
    expect(meta.seat_summaries?.x).toMatchObject({ player: "client", rollouts: 6, wins: 0, draws: 0, losses: 6, reward: { mean: expect.any(Number) } });
    expect(meta.seat_summaries?.o).toMatchObject({ player: "minimax", rollouts: 6, wins: 6, draws: 0, losses: 0 });
    const report = formatReport(result.summary, { envId: "tic-tac-toe-2p", model: "org/scripted", numExamples: 3, rolloutsPerExample: 2, driver: result.driver, seats: result.seats, seatSummaries: result.seatSummaries });
    expect(report).toMatch(/seats\s+seat\s+player\s+reward\s+std\s+wins\s+draws\s+losses\s+rollouts/);
    expect(report).toMatch(/\n\s+x\s+model\s+\S+\s+\S+\s+0\s+0\s+6\s+6/);
    expect(report).toMatch(/\n\s+o\s+minimax\s+\S+\s+\S+\s+6\s+0\s+0\s+6/);

    // A run against minimax is not continued as another line-up.
    await expect(evalToDir(options(server, base, { num_examples: 3, rollouts_per_example: 2 }, { seats: { x: "minimax" }, resume: result.runDir }))).rejects.toThrow(/seats x=client o=minimax ≠ x=minimax o=client/);
  });

  it("writes verifiers 0.4 episodes with one trace per seat the model played, and reads them back whole", async () => {
    const server = await model(naive);
    const fresh = await evalToDir(options(server, tempDir(), { num_examples: 2, rollouts_per_example: 1 }));
    const vf04 = await evalToDir(options(server, tempDir(), { num_examples: 2, rollouts_per_example: 1 }, { format: "vf04" }));
    const episodes = readFileSync(join(vf04.runDir, TRACES_FILE), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { traces: { agent: { name: string; trainable: boolean }; rewards: Record<string, { score: number; weight: number }>; calls: { finish_reason?: string; time: { start: number } }[]; nodes: { message: { content: string } }[] }[] });
    const rows = (await readResults<EvalRollout>(join(fresh.runDir, RESULTS_FILE))).rows;
    for (const [i, ep] of episodes.entries()) {
      expect(ep.traces.map((t) => [t.agent.name, t.agent.trainable])).toEqual([["x", true], ["o", true]]);
      const seats = rolloutSeats(rows[i] as EvalRollout);
      for (const t of ep.traces) {
        const seat = seats?.[t.agent.name];
        expect(t.rewards.outcome?.score).toBe(seat?.components.find((c) => c.name === "outcome")?.score);
        expect(t.calls).toHaveLength(seat?.metrics.moves ?? -1);
        expect(t.calls.every((c) => c.finish_reason === "stop" && c.time.start > 0)).toBe(true);
        expect(marksIn(t.nodes.map((n) => ({ role: "user", content: n.message.content ?? "" })))).toEqual(new Set([t.agent.name.toUpperCase()]));
      }
    }
    // Read back (resume, rescore, export-sft): the same rows, every seat's conversation included.
    const back = (await readRunRollouts(vf04.runDir, "tic-tac-toe-2p")).rows;
    const strip = (r: EvalRollout) => ({ prompt: r.prompt, completion: r.completion, reward: r.reward, seats: rolloutSeats(r) });
    expect(back.map(strip)).toEqual(rows.map(strip));
    const rescored = await rescoreRunDir({ runDir: vf04.runDir, registry });
    expect(rescored).toMatchObject({ rescored: 2, changed: 0, replay: { matched: 2 } });
  });

  it("exports each seat the model played as a conversation of its own, kept by that seat's reward", async () => {
    const server = await model(naive);
    const run = await evalToDir(options(server, tempDir(), { num_examples: 2, rollouts_per_example: 2 }));
    const { rows } = await readResults<EvalRollout>(join(run.runDir, RESULTS_FILE));
    const all = selectForSft(rows, { minReward: 0, bestPerExample: false });
    expect(all.report).toMatchObject({ read: 8, kept: 8 });
    // The lowest free cell wins as X and loses as O: only X's conversations reach reward 1.
    const winners = selectForSft(rows, { minReward: 1, bestPerExample: true });
    expect(winners.report).toMatchObject({ read: 8, kept: 2, belowMinReward: 4, notBestOfExample: 2 });
    for (const row of winners.rows) expect(marksIn(row.messages.map((m) => ({ role: "user", content: m.content })))).toEqual(new Set(["X"]));
  });

  it("refuses bad --seats before the first rollout", async () => {
    const server = await model(naive);
    const base = tempDir();
    await expect(evalToDir(options(server, base, {}, { seats: { z: "client" } }))).rejects.toThrow(/no seat "z"; its seats: x, o/);
    await expect(evalToDir(options(server, base, {}, { seats: { x: "alphazero" } }))).rejects.toThrow(/cannot be played by "alphazero"; its players: client, minimax, random/);
    await expect(evalToDir(options(server, base, {}, { seats: { x: "minimax", o: "random" } }))).rejects.toThrow(/give the model at least one seat/);
    await expect(evalToDir(options(server, base, { env_id: "reverse-text" }, { seats: { x: "client" } }))).rejects.toThrow(/reverse-text has one player and no seats/);
    expect(server.requests).toHaveLength(0);
    expect(parseSeatsFlag(["o=minimax", "x=client,"])).toEqual({ o: "minimax", x: "client" });
    expect(() => parseSeatsFlag(["minimax"])).toThrow(/SEAT=PLAYER/);
    expect(parseSeatsFlag(undefined)).toBeUndefined();
  });
});

/** tic-tac-toe-2p whose win is worth 2: a rescore with it changes every won seat's reward. */
function doubledWins(): AnyEnvironment {
  const env = registry.get("tic-tac-toe-2p") as AnyEnvironment;
  return { ...env, version: "1.1.0", rubric: { ...env.rubric, rewards: env.rubric.rewards.map((r) => (r.name === "outcome" ? { ...r, weight: 2 } : r)) } };
}

describe("rescoring a seated run", () => {
  for (const [where, driver] of [["in-process", undefined], ["over HTTP", httpDriver]] as const) {
    it(`replays every seat's moves in the environment's order and scores each seat again (run ${where})`, async () => {
      const server = await model(naive);
      const base = tempDir();
      // The model (lowest free cell) on both seats, then on x against random: wins, losses and draws to rescore.
      const selfPlay = await evalToDir(options(server, base, { num_examples: 2, rollouts_per_example: 2 }, driver ? { driver: driver() } : {}));
      const vsRandom = await evalToDir(options(server, tempDir(), { num_examples: 3, rollouts_per_example: 2 }, { seats: { o: "random" }, ...(driver ? { driver: driver() } : {}) }));
      for (const run of [selfPlay, vsRandom]) {
        const same = await rescoreRunDir({ runDir: run.runDir, registry, now: new Date("2026-11-24T12:00:00Z") });
        expect(same).toMatchObject({ rescored: run.summary.rollouts, skipped: 0, changed: 0, replay: { matched: run.summary.rollouts, diverged: 0, failed: 0 } });
        expect(same.seatsAfter).toEqual(same.seatsBefore);

        const doubled = await rescoreRunDir({ runDir: run.runDir, registry: new EnvRegistry("node", [doubledWins()]), now: new Date("2026-11-24T12:00:01Z") });
        expect(doubled.replay.matched).toBe(run.summary.rollouts);
        const before = (await readResults<EvalRollout>(join(run.runDir, RESULTS_FILE))).rows;
        const after = (await readResults<EvalRollout>(doubled.output)).rows;
        for (const [i, row] of after.entries()) {
          const old = rolloutSeats(before[i] as EvalRollout);
          const now = rolloutSeats(row);
          for (const seat of ["x", "o"]) {
            expect(now?.[seat]?.reward).toBeCloseTo((old?.[seat]?.reward ?? 0) + (old?.[seat]?.metrics.win ?? 0), 10);
            // The conversations are the row's own, kept.
            expect(now?.[seat]?.completion).toEqual(old?.[seat]?.completion);
          }
          expect(row.reward).toBe(now?.x?.reward);
        }
        expect(formatRescoreReport(doubled)).toMatch(/seat x\s+\S+\s+\S+\s+[+-]\d/);
      }
      // Without a replay there is no game state to score from: each model seat is scored on its conversation alone.
      const stateless = await rescoreRunDir({ runDir: vsRandom.runDir, registry, replay: false, now: new Date("2026-11-24T12:00:02Z") });
      expect(stateless.replay.off).toBe(vsRandom.summary.rollouts);
      const rows = (await readResults<EvalRollout>(stateless.output)).rows;
      for (const row of rows) {
        expect(rolloutSeats(row)?.x?.components.find((c) => c.name === "outcome")?.error).toMatch(/scores played episodes/);
        // The environment's seat cannot be scored without the game: it keeps its score.
        expect(rolloutSeats(row)?.o?.player).toBe("random");
      }
    });
  }

  it("keeps a seated row that records no seats, and says why", async () => {
    const server = await model(naive);
    const run = await evalToDir(options(server, tempDir(), { num_examples: 1, rollouts_per_example: 2 }));
    const path = join(run.runDir, RESULTS_FILE);
    const lines = readFileSync(path, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    delete lines[0]?.seats;
    writeFileSync(path, lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
    const result = await rescoreRunDir({ runDir: run.runDir, registry });
    expect(result).toMatchObject({ rescored: 1, skipped: 1 });
    expect(formatRescoreReport(result)).toMatch(/kept\s+1: tic-tac-toe-2p has seats and this row records none/);
  });
});
