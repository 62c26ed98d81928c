import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./support/cli-process.js";
import { reverseLastUser, startScriptedModel, type ScriptedModelServer } from "./support/scripted-model.js";
import { readTranscript } from "../src/envs/builtin/tic-tac-toe/expert.js";
import { startNodeServer, type RunningServer } from "../src/server/node/serve.js";

/** The CLI as a process: flags, exit codes, Ctrl-C, --resume, export-sft. */
describe("edgegym eval (process)", () => {
  let model: ScriptedModelServer;
  const out = mkdtempSync(join(tmpdir(), "edgegym-cli-"));
  beforeAll(async () => {
    model = await startScriptedModel(async (req, n) => {
      await new Promise((r) => setTimeout(r, 120));
      return reverseLastUser(req, n);
    });
  });
  afterAll(async () => {
    await model.close();
    rmSync(out, { recursive: true, force: true });
  });

  const args = (...extra: string[]) => ["eval", "reverse-text", "-m", "tiny/model", "-b", model.baseUrl, "-k", "SCRIPTED_KEY", "-n", "6", "-r", "1", "-c", "1", "-t", "64", "-o", out, "-v", ...extra];
  const runDir = (): string => {
    const parent = join(out, "evals", "reverse-text--tiny--model");
    const [only] = readdirSync(parent);
    return join(parent, only as string);
  };
  const rows = (): { example_id: number; rollout_index: number; error: unknown }[] =>
    readFileSync(join(runDir(), "results.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));

  it("Ctrl-C saves the finished rollouts and exits 130; --resume finishes the run", async () => {
    const first = runCli(args(), { SCRIPTED_KEY: "sk-test" });
    await first.waitForStderr(/rollout \d+#0 reward/, 2);
    first.child.kill("SIGINT");
    expect(await first.exit).toBe(130);
    expect(first.stderr()).toMatch(/interrupted: \d\/6 rollouts saved; continue with --resume=/);
    const saved = rows();
    expect(saved.length).toBeGreaterThanOrEqual(2);
    expect(saved.length).toBeLessThan(6);
    expect(JSON.parse(readFileSync(join(runDir(), "metadata.json"), "utf8"))).toMatchObject({ status: "interrupted", completed_rollouts: saved.length });

    const second = runCli(args("--resume"), { SCRIPTED_KEY: "sk-test" });
    expect(await second.exit).toBe(0);
    expect(second.stderr()).toMatch(new RegExp(`resuming .*: ${saved.length} rollouts done`));
    expect(second.stdout()).toMatch(/reward {7}mean 1\.200/);
    const all = rows();
    expect(all.map((r) => r.example_id).sort()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(JSON.parse(readFileSync(join(runDir(), "metadata.json"), "utf8"))).toMatchObject({ status: "completed", completed_rollouts: 6, avg_reward: expect.closeTo(1.2, 10) });
  }, 60_000);

  it("exports the run as SFT data", async () => {
    const run = runCli(["export-sft", runDir(), "--min-reward", "1", "--best-per-example"]);
    expect(await run.exit).toBe(0);
    expect(run.stdout()).toMatch(/wrote 6 conversations to .*sft\.jsonl/);
    expect(existsSync(join(runDir(), "sft.jsonl"))).toBe(true);
  }, 30_000);

  it("rescores the run without the model: a table of old and new means, a new file beside the old one", async () => {
    const requestsBefore = model.requests.length;
    const run = runCli(["rescore", runDir()]);
    expect(await run.exit).toBe(0);
    expect(run.stdout()).toMatch(/rescored 6 of 6 rollouts · reverse-text 1\.0\.0 · 0 changed reward/);
    expect(run.stdout()).toMatch(/reward\s+1\.200\s+1\.200\s+\+0\.000/);
    expect(run.stdout()).toMatch(/lcs_ratio\s+1\.000\s+1\.000/);
    const written = readdirSync(runDir()).filter((n) => /^results\.rescored-\d{8}T\d{6}Z\.jsonl$/.test(n));
    expect(written).toHaveLength(1);
    expect(model.requests.length).toBe(requestsBefore);
    const missing = runCli(["rescore", join(out, "no-such-run")]);
    expect(await missing.exit).toBe(1);
    expect(missing.stderr()).toMatch(/no-such-run does not exist/);
  }, 30_000);

  it("rejects bad flags with a message and exit 1", async () => {
    const bad = runCli(["eval", "reverse-text", "-m", "x", "-S", "{not json"]);
    expect(await bad.exit).toBe(1);
    expect(bad.stderr()).toMatch(/--sampling-args is not valid JSON/);
    const unknownEnv = runCli(["eval", "nope", "-m", "x", "-b", model.baseUrl, "-o", out]);
    expect(await unknownEnv.exit).toBe(1);
    expect(unknownEnv.stderr()).toMatch(/no environment "nope"/);
    const badFormat = runCli(["eval", "reverse-text", "-m", "x", "--format", "vf05"]);
    expect(await badFormat.exit).toBe(1);
    expect(badFormat.stderr()).toMatch(/--format must be vf03 or vf04/);
  }, 30_000);

  it("--format vf04 writes verifiers 0.4 episodes (traces.jsonl) that export-sft reads", async () => {
    const own = mkdtempSync(join(tmpdir(), "edgegym-cli-vf04-"));
    try {
      const run = runCli(["eval", "reverse-text", "-m", "tiny/model", "-b", model.baseUrl, "-n", "2", "-r", "1", "-o", own, "--format", "vf04"]);
      expect(await run.exit).toBe(0);
      const parent = join(own, "evals", "reverse-text--tiny--model");
      const dir = join(parent, readdirSync(parent)[0] as string);
      expect(readdirSync(dir).sort()).toEqual(["metadata.json", "traces.jsonl"]);
      const episodes = readFileSync(join(dir, "traces.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { ok: boolean; traces: unknown[] });
      expect(episodes.map((e) => [e.ok, e.traces.length])).toEqual([[true, 1], [true, 1]]);
      const sft = runCli(["export-sft", dir, "--min-reward", "1"]);
      expect(await sft.exit).toBe(0);
      expect(readFileSync(join(dir, "sft.jsonl"), "utf8").trim().split("\n")).toHaveLength(2);
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  }, 60_000);
});

/** A seated environment from the command line: self-play in this process, and the model against minimax on a server. */
describe("edgegym eval of a seated environment (process)", () => {
  let model: ScriptedModelServer;
  let server: RunningServer;
  const out = mkdtempSync(join(tmpdir(), "edgegym-cli-seats-"));
  beforeAll(async () => {
    // Takes the lowest free cell: in self-play X wins on the 3-5-7 diagonal; minimax beats it.
    model = await startScriptedModel((req) => ({ content: `<move>${readTranscript(req.messages).board.findIndex((c) => c === null) + 1}</move>` }));
    server = await startNodeServer({ port: 0, host: "127.0.0.1", dbPath: ":memory:", reapIntervalMs: 0 });
  });
  afterAll(async () => {
    await model.close();
    await server.close();
    rmSync(out, { recursive: true, force: true });
  });
  const runDirUnder = (base: string): string => {
    const parent = join(base, "evals", "tic-tac-toe-2p--tiny--model");
    return join(parent, readdirSync(parent)[0] as string);
  };

  it("self-play in this process: both seats the model's, a row per seat in the table with wins, draws and losses", async () => {
    const base = join(out, "self");
    const run = runCli(["eval", "tic-tac-toe-2p", "-m", "tiny/model", "-b", model.baseUrl, "-n", "1", "-r", "2", "-o", base]);
    expect(await run.exit, run.stderr()).toBe(0);
    expect(run.stderr()).toMatch(/seats: x=client o=client \(client: the model, in self-play: one conversation per seat\)/);
    expect(run.stdout()).toMatch(/seats\s+seat\s+player\s+reward\s+std\s+wins\s+draws\s+losses\s+rollouts/);
    expect(run.stdout()).toMatch(/\n\s+x\s+model\s+1\.100\s+0\.000\s+2\s+0\s+0\s+2\s+forfeit 0\.000 · moves 4\.000/);
    expect(run.stdout()).toMatch(/\n\s+o\s+model\s+0\.100\s+0\.000\s+0\s+0\s+2\s+2\s+forfeit 0\.000 · moves 3\.000/);
    const meta = JSON.parse(readFileSync(join(runDirUnder(base), "metadata.json"), "utf8"));
    expect(meta.seats).toEqual({ x: "client", o: "client" });
    expect(meta.seat_summaries.o).toMatchObject({ player: "client", wins: 0, losses: 2 });
  }, 60_000);

  it("--seats o=minimax over --server: the model plays x against the server's minimax; rescore replays it", async () => {
    const base = join(out, "server");
    const run = runCli(["eval", "tic-tac-toe-2p", "-m", "tiny/model", "-b", model.baseUrl, "-n", "2", "-r", "1", "--seats", "o=minimax", "--server", server.url, "-o", base]);
    expect(await run.exit, run.stderr()).toBe(0);
    expect(run.stdout()).toMatch(new RegExp(`tic-tac-toe-2p · tiny/model · 2 rollouts .* · ${server.url.replace(/[.]/g, "\\.")}`));
    expect(run.stdout()).toMatch(/\n\s+x\s+model\s+\S+\s+\S+\s+0\s+0\s+2\s+2/);
    expect(run.stdout()).toMatch(/\n\s+o\s+minimax\s+\S+\s+\S+\s+2\s+0\s+0\s+2/);
    const rows = readFileSync(join(runDirUnder(base), "results.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(rows.map((r: { seats: { o: { player: string } }; episode_id: string }) => [r.seats.o.player, r.episode_id.startsWith("ep_")])).toEqual([["minimax", true], ["minimax", true]]);
    const rescore = runCli(["rescore", runDirUnder(base)]);
    expect(await rescore.exit, rescore.stderr()).toBe(0);
    expect(rescore.stdout()).toMatch(/rescored 2 of 2 rollouts .* 0 changed reward/);
    expect(rescore.stdout()).toMatch(/replay\s+matched 2/);
    expect(rescore.stdout()).toMatch(/seat x\s+\S+\s+\S+\s+\+0\.000/);
  }, 60_000);

  it("refuses --seats it cannot honour, before any rollout", async () => {
    const bad = runCli(["eval", "tic-tac-toe-2p", "-m", "x", "-b", model.baseUrl, "-o", out, "--seats", "x=alphazero"]);
    expect(await bad.exit).toBe(1);
    expect(bad.stderr()).toMatch(/seat "x" of tic-tac-toe-2p cannot be played by "alphazero"; its players: client, minimax, random/);
    const single = runCli(["eval", "reverse-text", "-m", "x", "-b", model.baseUrl, "-o", out, "--seats", "x=client"]);
    expect(await single.exit).toBe(1);
    expect(single.stderr()).toMatch(/reverse-text has one player and no seats/);
    const shape = runCli(["eval", "tic-tac-toe-2p", "-m", "x", "--seats", "minimax"]);
    expect(await shape.exit).toBe(1);
    expect(shape.stderr()).toMatch(/--seats takes SEAT=PLAYER/);
  }, 60_000);
});
