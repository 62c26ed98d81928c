import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parquetReadObjects } from "hyparquet";
import { afterAll, describe, expect, it, vi } from "vitest";
import { builtinEnvs, EnvRegistry } from "../../envs/index.js";
import { readTranscript, ticTacToeExpertMove } from "../../envs/builtin/tic-tac-toe/expert.js";
import { InProcessDriver } from "../in-process-driver.js";
import { builtinExperts, PolicyModel, policyReply, type Policy } from "../policy.js";
import { generateCommand, loadPolicyModule } from "./generate-command.js";
import { generateSft, writeSftRows, type GenerateOptions } from "./generate.js";

const dir = mkdtempSync(join(tmpdir(), "edgegym-generate-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const registry = new EnvRegistry("node", builtinEnvs);

function options(policy: Policy, extra: Partial<GenerateOptions> = {}): GenerateOptions {
  return {
    envId: "tic-tac-toe",
    driver: new InProcessDriver(registry),
    model: new PolicyModel("test-policy", policy),
    numExamples: 12,
    bestOf: 1,
    minReward: -Infinity,
    split: "train",
    envArgs: {},
    sampling: {},
    seed: 0,
    concurrency: 4,
    retry: { maxRetries: 0 },
    ...extra,
  };
}

/** A weak player: the first free cell the board shows. */
const firstFree: Policy = {
  act: (messages) => {
    const { board } = readTranscript(messages);
    return `<move>${board.indexOf(null) + 1}</move>`;
  },
};

describe("the tic-tac-toe expert", () => {
  it("reads the board and the model's mark from what the model sees", () => {
    const messages = [
      { role: "system" as const, content: "rules" },
      { role: "user" as const, content: "You play O; your opponent plays X and moved first, taking cell 5.\n\n 1 | 2 | 3\n---+---+---\n 4 | X | 6\n---+---+---\n 7 | 8 | 9\n\nYour move." },
    ];
    expect(readTranscript(messages)).toEqual({ mark: "O", board: [null, null, null, null, "X", null, null, null, null] });
    // Against a centre opening only a corner draws.
    expect(["<move>1</move>", "<move>3</move>", "<move>7</move>", "<move>9</move>"]).toContain(ticTacToeExpertMove(messages));
    expect(() => readTranscript([{ role: "user", content: "You play X. No board here." }])).toThrow(/no board/);
  });

  it("never loses and never plays an invalid move: all draws against minimax, no losses against random", async () => {
    const vsMinimax = await generateSft(options(builtinExperts["tic-tac-toe"] as Policy, { numExamples: 20, envArgs: { opponent: "minimax" } }));
    expect(vsMinimax.rollouts).toBe(20);
    expect(vsMinimax.metrics).toMatchObject({ draw: 1, loss: 0, invalid_moves: 0, format: 1 });
    const vsRandom = await generateSft(options(builtinExperts["tic-tac-toe"] as Policy, { numExamples: 30, envArgs: { opponent: "random" } }));
    expect(vsRandom.metrics.loss).toBe(0);
    expect(vsRandom.metrics.win).toBeGreaterThan(0.6);
    // Each row is the whole game as the model saw it: the system prompt, then user/assistant turns.
    const roles = vsRandom.rows[0]?.messages.map((m) => m.role) ?? [];
    expect(roles[0]).toBe("system");
    expect(roles.slice(1).every((r, i) => r === (i % 2 === 0 ? "user" : "assistant") || r === "user")).toBe(true);
    expect(vsRandom.rows[0]?.messages.find((m) => m.role === "assistant")?.content).toMatch(/^<move>[1-9]<\/move>$/);
  });
});

describe("edgegym generate", () => {
  it("keeps episodes by reward, and with best-of-N only the best of each task", async () => {
    const all = await generateSft(options(firstFree, { envArgs: { opponent: "random" }, bestOf: 1 }));
    expect(all.report.kept).toBe(12);
    const filtered = await generateSft(options(firstFree, { envArgs: { opponent: "random" }, minReward: 0.5 }));
    expect(filtered.report.kept).toBeLessThan(12);
    expect(filtered.report.kept + filtered.report.belowMinReward).toBe(12);
    // Rejection sampling: 4 games a task against a random opponent, the best kept.
    const best = await generateSft(options(firstFree, { envArgs: { opponent: "random" }, bestOf: 4 }));
    expect(best.rollouts).toBe(48);
    expect(best.report).toMatchObject({ kept: 12, notBestOfExample: 36 });
    const winsOfBest = best.rows.filter((r) => /You win!/.test(r.messages.at(-1)?.content ?? "")).length;
    const winsOfOne = all.rows.filter((r) => /You win!/.test(r.messages.at(-1)?.content ?? "")).length;
    expect(winsOfBest).toBeGreaterThan(winsOfOne);
  });

  it("checks what a policy returns as hostile input: a bad reply fails the episode and is never kept", async () => {
    expect(() => policyReply(42)).toThrow(/no valid assistant message/);
    expect(() => policyReply({ role: "assistant", content: "x", extra: 1 })).toThrow(/no valid assistant message/);
    expect(() => policyReply("x".repeat(100_001))).toThrow(/characters/);
    const bad = await generateSft(options({ act: () => ({ role: "user", content: "<move>1</move>" }) }, { numExamples: 3 }));
    expect(bad.report).toMatchObject({ read: 3, failed: 3, kept: 0 });
  });

  it("writes the environment's tools beside the messages, in JSONL and Parquet", async () => {
    const answer: Policy = { act: () => ({ role: "assistant", content: "<answer>0</answer>" }) };
    const run = await generateSft(options(answer, { envId: "tool-math", numExamples: 2, split: "train" }));
    expect(run.rows).toHaveLength(2);
    expect(run.rows[0]?.tools?.map((t) => t.function.name)).toEqual(["calculator"]);
    const jsonl = join(dir, "tools.jsonl");
    await writeSftRows(run.rows, jsonl, "jsonl");
    expect(JSON.parse(readFileSync(jsonl, "utf8").split("\n")[0] as string)).toEqual(run.rows[0]);
    const parquet = join(dir, "tools.parquet");
    await writeSftRows(run.rows, parquet, "parquet");
    const buffer = readFileSync(parquet);
    const read = await parquetReadObjects({ file: buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength) });
    expect(JSON.parse(read[0]?.tools as string)).toEqual(run.rows[0]?.tools);
  });

  it("runs from the command line with the built-in expert or a policy module", async () => {
    const out = join(dir, "cli.jsonl");
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const err = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      expect(await generateCommand(["tic-tac-toe", "--expert", "builtin", "-n", "5", "--min-reward", "0.5", "-o", out])).toBe(0);
      const rows = readFileSync(out, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { messages: unknown[] });
      expect(rows).toHaveLength(5);
      const module = join(dir, "policy.mjs");
      writeFileSync(module, "export async function act(messages) { return '<move>' + (messages.length) + '</move>'; }\n");
      expect(typeof (await loadPolicyModule(module)).act).toBe("function");
      expect(await generateCommand(["tic-tac-toe", "--expert", module, "-n", "3", "-o", join(dir, "m.parquet"), "--format", "parquet"])).toBe(0);
      await expect(generateCommand(["reverse-text", "--expert", "builtin"])).rejects.toThrow(/no built-in expert/);
      await expect(generateCommand(["tic-tac-toe", "--expert", "builtin", "--best-of", "1000"])).rejects.toThrow(/--best-of/);
      await expect(generateCommand(["tic-tac-toe"])).rejects.toThrow(/exactly one policy/);
    } finally {
      log.mockRestore();
      err.mockRestore();
    }
  });
});
