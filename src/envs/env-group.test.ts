import { describe, expect, it } from "vitest";
import { proceduralDataset, rowsDataset } from "./dataset.js";
import { singleTurnEnv } from "./define.js";
import { scoreCompletion, scoreEpisode, startEpisode, stepEpisode } from "./engine.js";
import { judgeQa } from "./builtin/judge-qa/index.js";
import { envGroup } from "./env-group.js";
import { EnvRegistry } from "./registry.js";
import { envInfo } from "./info.js";
import { defineRubric } from "./rubric.js";
import { scoreGroup } from "./score-group.js";
import { addCall as call, echo, sums } from "../../test/support/echo-and-sums.js";
import { inProcessApp } from "../../test/support/in-process.js";

describe("envGroup", () => {
  const group = envGroup({ id: "mixed", envs: [echo, sums] });

  it("hands the operator's services (judges) to its members", async () => {
    const withJudge = envGroup({ id: "judged", envs: [judgeQa] });
    await expect(startEpisode(withJudge, { split: "train", index: 0 })).rejects.toThrow(/no LLM judge is configured/);
    const judges = { judges: [{ name: "default", baseURL: "http://127.0.0.1:9/v1", models: ["m"] }], defaultJudge: "default" };
    const bound = new EnvRegistry("node", [withJudge]).withServices({ judges }).get("judged");
    await expect(startEpisode(bound!, { split: "train", index: 0 })).resolves.toMatchObject({ envId: "judged" });
  });

  it("concatenates splits and tags each task with its environment", async () => {
    expect([group.dataset.size("train"), group.dataset.size("eval")]).toEqual([5, 1]);
    const row = await group.dataset.row("train", 3);
    expect(row.info).toEqual({ env_id: "sums", env_index: 0 });
    // The member's system prompt travels inside the task's prompt.
    expect(row.prompt).toEqual([
      { role: "system", content: "Use the add tool, then answer with the number." },
      { role: "user", content: "2+3" },
    ]);
    expect((await group.dataset.row("train", 0)).info).toEqual({ word: "alpha", env_id: "echo", env_index: 0 });
    await expect(async () => group.dataset.row("train", 5)).rejects.toThrow(RangeError);
  });

  it("interleaves splits one task of each member in turn", async () => {
    const mixed = envGroup({ id: "mixed-rr", envs: [echo, sums], layout: "interleave" });
    const order = [];
    for (let i = 0; i < 5; i++) order.push(((await mixed.dataset.row("train", i)).info as { env_id: string; env_index: number }));
    expect(order.map((o) => `${o.env_id}:${o.env_index}`)).toEqual(["echo:0", "sums:0", "echo:1", "sums:1", "echo:2"]);
    // Unequal sizes (3, 1, 2): once a member runs out, the others go on alternating.
    const one = singleTurnEnv({ id: "one", version: "1", description: "1", dataset: rowsDataset({ train: [{ prompt: "x" }] }), rubric: defineRubric([]) });
    const three = envGroup({ id: "three", envs: [echo, one, sums], layout: "interleave" });
    const seen = [];
    for (let i = 0; i < 6; i++) seen.push((await three.dataset.row("train", i)).info as { env_id: string; env_index: number });
    expect(seen.map((o) => `${o.env_id}:${o.env_index}`)).toEqual(["echo:0", "one:0", "sums:0", "echo:1", "sums:1", "echo:2"]);
    await expect(async () => three.dataset.row("train", 6)).rejects.toThrow(RangeError);
  });

  it("runs a tool task with the member's tools, stop conditions and rubric", async () => {
    let snap = await startEpisode(group, { index: 4 });
    expect(snap.state).toEqual({ env: "sums", split: "train", state: { calls: 0 }, toolErrors: 0 });
    expect(group.toolDefinitionsFor?.(snap.state as never).map((t) => t.function.name)).toEqual(["add"]);
    const step = await stepEpisode(group, snap, call(4, 4));
    expect(step.reply).toEqual([{ role: "tool", tool_call_id: "c1", content: "8" }]);
    expect(step.snapshot.done).toBe(false);
    snap = (await stepEpisode(group, JSON.parse(JSON.stringify(step.snapshot)), { role: "assistant", content: "<answer>8</answer>" })).snapshot;
    expect(snap).toMatchObject({ done: true, stopReason: "no_tool_calls", truncated: false });
    const score = await scoreEpisode(group, snap);
    expect(score.reward).toBe(1.5);
    expect(score.components).toEqual([
      { name: "sums/correct", weight: 1, score: 1 },
      { name: "sums/used_tool", weight: 0.5, score: 1 },
    ]);
    expect(score.metrics.turns).toBe(2);
  });

  it("passes each member its own args and single-turn stop", async () => {
    const snap = await startEpisode(group, { index: 1, args: { envs: { echo: { shout: true } } } });
    expect(snap.messages[0]).toEqual({ role: "system", content: "Repeat the word inside <answer> tags." });
    const done = (await stepEpisode(group, snap, { role: "assistant", content: "<answer>BETA</answer>" })).snapshot;
    expect(done).toMatchObject({ done: true, stopReason: "single_turn" });
    expect((await scoreEpisode(group, done)).components).toEqual([{ name: "echo/exact", weight: 1, score: 1 }]);
    await expect(startEpisode(group, { index: 0, args: { envs: { echo: { shout: "loud" } } } })).rejects.toThrow(/args for mixed/);
  });

  it("scores a mixed group of episodes, each by its own rubric", async () => {
    const a = (await stepEpisode(group, await startEpisode(group, { index: 0 }), { role: "assistant", content: "<answer>alpha</answer>" })).snapshot;
    const b = (await stepEpisode(group, await startEpisode(group, { index: 3 }), { role: "assistant", content: "<answer>6</answer>" })).snapshot;
    const scores = await scoreGroup(group, [a, b]);
    expect(scores.map((s) => s.components.map((c) => c.name))).toEqual([["echo/exact"], ["sums/correct", "sums/used_tool"]]);
    expect(scores.map((s) => s.reward)).toEqual([1, 0]);
  });

  it("scores completions statelessly by the env_id in their info, and says when it is missing", async () => {
    const ok = await scoreCompletion(group, { prompt: "x", completion: "<answer>alpha</answer>", answer: "alpha", info: { env_id: "echo" } });
    expect(ok.reward).toBe(1);
    const missing = await scoreCompletion(group, { prompt: "x", completion: "<answer>alpha</answer>", answer: "alpha" });
    expect(missing.components[0]?.error).toMatch(/no member "undefined"/);
  });

  it("publishes the members' tools and rewards", () => {
    const info = envInfo(group);
    expect(info.tools.map((t) => t.function.name)).toEqual(["add"]);
    expect(info.rubric.map((r) => r.name)).toEqual(["echo/exact", "sums/correct", "sums/used_tool"]);
    expect(info.kind).toBe("multi_turn");
    expect(info.max_turns).toBe(3);
  });

  it("needs interleaving (and only procedural members) for procedural splits", () => {
    const counting = singleTurnEnv({ id: "count", version: "1", description: "c", dataset: proceduralDataset((rng) => ({ prompt: String(rng.int(0, 9)) })), rubric: defineRubric([]) });
    expect(() => envGroup({ id: "g", envs: [counting, echo], layout: "interleave" })).toThrow(/procedural members/);
    const both = envGroup({ id: "g", envs: [counting, { ...counting, id: "count2" }], layout: "interleave" });
    expect(both.dataset.size("train")).toBeNull();
  });

  it("serves over HTTP with the task's own tools at reset", async () => {
    const app = inProcessApp({ envs: [group] });
    try {
      const reset = await app.call("POST", "/v1/envs/mixed/episodes", { index: 3 });
      expect(reset.status).toBe(201);
      expect(reset.json.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(["add"]);
      expect(reset.json.max_turns).toBe(3);
      const single = await app.call("POST", "/v1/envs/mixed/episodes", { index: 0 });
      expect(single.json.tools).toEqual([]);
      expect(single.json.max_turns).toBe(1);
    } finally {
      app.close();
    }
  });
});
