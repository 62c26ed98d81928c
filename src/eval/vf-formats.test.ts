import { describe, expect, it } from "vitest";
import type { EvalRollout } from "../protocol/index.js";
import type { TimedSpan } from "./rollout.js";
import { fromVf03Row, fromVf04Episode, toVf03Row, toVf04Episode, vf03Timing, vf04TaskFits, withFlatTiming } from "./vf-formats.js";

const t0 = 1_700_000_000;
const spans: TimedSpan[] = [
  { kind: "reset", start: t0, end: t0 + 0.01 },
  { kind: "model", start: t0 + 0.01, end: t0 + 0.41 },
  { kind: "step", start: t0 + 0.41, end: t0 + 0.46 },
  { kind: "model", start: t0 + 0.46, end: t0 + 0.66 },
  { kind: "step", start: t0 + 0.66, end: t0 + 0.7 },
  { kind: "score", start: t0 + 0.7, end: t0 + 0.8 },
];

const row: EvalRollout = {
  example_id: 3,
  rollout_index: 1,
  task: "calculator",
  prompt: [
    { role: "system", content: "Use the tools." },
    { role: "user", content: "2*3+1?" },
  ],
  completion: [
    { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "multiply", arguments: '{"a":2,"b":3}' } }] },
    { role: "tool", tool_call_id: "c1", content: "6" },
    { role: "assistant", content: "7" },
  ],
  answer: "7",
  info: {},
  reward: 1.1,
  metrics: { correct: 1, tool_use: 0.5, turns: 2 },
  components: [
    { name: "correct", weight: 1, score: 1 },
    { name: "tool_use", weight: 0.2, score: 0.5 },
  ],
  stop_condition: "no_tool_calls",
  is_completed: true,
  is_truncated: false,
  finish_reasons: ["tool_calls", "stop"],
  error: null,
  timing: { start_time: t0, generation_ms: 600, env_ms: 100, scoring_ms: 100, total_ms: 800 },
  token_usage: { input_tokens: 40, output_tokens: 12 },
  seed: 99,
  episode_id: null,
  tool_defs: [{ type: "function", function: { name: "multiply", description: "a*b", parameters: { type: "object" } } }],
  correct: 1,
  tool_use: 0.5,
  turns: 2,
};

describe("verifiers 0.3 timing", () => {
  it("nests the phases as RolloutTiming does, in seconds", () => {
    const t = vf03Timing(row.timing, spans);
    expect(t).toMatchObject({ generation_ms: 600, setup: { start: t0, duration: expect.closeTo(0.01, 6) }, generation: { start: t0, end: t0 + 0.7 }, scoring: { duration: expect.closeTo(0.1, 6) } });
    expect((t.model as { spans: unknown[]; duration: number }).spans).toHaveLength(2);
    expect((t.model as { duration: number }).duration).toBeCloseTo(0.6, 6);
    expect((t.env as { duration: number }).duration).toBeCloseTo(0.09, 6);
    expect(t.total).toBeCloseTo(0.8, 6);
    expect(t.overhead).toBeCloseTo(0, 6);
  });

  it("gives a rollout that never scored total 0, as verifiers does", () => {
    expect(vf03Timing(row.timing, spans.slice(0, 2)).total).toBe(0);
  });

  it("reads its own rows back, and rows vf-eval wrote (seconds only, no rollout_index)", () => {
    const written = JSON.parse(JSON.stringify(toVf03Row(row, spans))) as unknown;
    expect(fromVf03Row(written, 0, "calculator")).toEqual(row);
    expect(withFlatTiming(written)).toMatchObject({ timing: row.timing });
    const vfRow = { example_id: 2, prompt: [{ role: "user", content: "abc" }], completion: [{ role: "assistant", content: "cba" }], reward: 1.0, error: null, timing: { start_time: t0, setup: { duration: 0.01 }, model: { spans: [], duration: 0.4 }, env: { duration: 0.05 }, scoring: { duration: 0.1 }, total: 0.6 }, is_completed: true, is_truncated: false, metrics: { lcs_ratio: 1 }, tool_defs: null, token_usage: { input_tokens: 12.0, output_tokens: 7.0 } };
    const ours = fromVf03Row(vfRow, 4, "reverse-text");
    expect(ours).toMatchObject({ example_id: 2, rollout_index: 4, task: "reverse-text", seed: 0, components: [], timing: { generation_ms: 400, scoring_ms: expect.closeTo(100, 6), total_ms: 600 } });
    expect(ours.timing.env_ms).toBeCloseTo(60, 6);
    expect(ours.tool_defs).toBeUndefined();
  });

  it("refuses a row without an integer example_id", () => {
    expect(() => fromVf03Row({ prompt: [] }, 0, "x")).toThrow(/example_id/);
    expect(() => fromVf03Row([], 0, "x")).toThrow(/JSON object/);
  });
});

/** A parsed episode, walked by the assertions below (its shape is what they check). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON walked freely in assertions
type Loose = any;

describe("verifiers 0.4 episodes", () => {
  let n = 0;
  const ctx = { envId: "calculator", model: "org/m", runId: "abcd1234", sampling: { temperature: 0.5, seed: 3 }, newId: () => `id${n++}` };

  it("writes one trace whose graph, calls, rewards and timing say what the rollout did", () => {
    const ep = toVf04Episode(row, spans, ctx) as Loose;
    expect(ep).toMatchObject({ env: { id: "calculator" }, run: { type: "eval", id: "abcd1234" }, ok: true, task: { data: { idx: 3, system_prompt: "Use the tools.", prompt: [{ role: "user", content: "2*3+1?" }] } } });
    const trace = ep.traces[0];
    expect(trace.nodes.map((nd: Loose) => [nd.parent ?? null, nd.message.role, nd.sampled])).toEqual([
      [null, "system", false],
      [0, "user", false],
      [1, "assistant", true],
      [2, "tool", false],
      [3, "assistant", true],
    ]);
    expect(trace.nodes[2].message.tool_calls).toEqual([{ id: "c1", type: "function", name: "multiply", arguments: '{"a":2,"b":3}' }]);
    expect(trace.nodes[0].tools).toEqual([{ type: "function", name: "multiply", description: "a*b", parameters: { type: "object" } }]);
    expect(trace.calls.map((c: Loose) => [c.node, c.finish_reason])).toEqual([[2, "tool_calls"], [4, "stop"]]);
    expect(trace.rewards).toEqual({ correct: { score: 1, weight: 1 }, tool_use: { score: 0.5, weight: 0.2 } });
    expect(trace.metrics).toEqual({ turns: 2 });
    expect(trace.agent.config).toEqual({ model: "org/m", sampling: { temperature: 0.5 } });
    expect(trace.timing.agent.model.duration).toBeCloseTo(0.6, 6);
    expect(trace.timing.scoring).toEqual({ start: t0 + 0.7, end: t0 + 0.8 });
  });

  it("reads its own episodes back exactly", () => {
    const ep = JSON.parse(JSON.stringify(toVf04Episode(row, spans, ctx))) as unknown;
    expect(fromVf04Episode(ep, 0, "calculator")).toEqual(row);
  });

  it("reads a peer's episode from the graph alone: main branch, Σ score × weight, flat tool calls", () => {
    const ep = toVf04Episode(row, spans, ctx) as Loose;
    delete ep.traces[0].info;
    const ours = fromVf04Episode(JSON.parse(JSON.stringify(ep)), 5, "calculator");
    expect(ours).toMatchObject({ example_id: 3, rollout_index: 5, reward: expect.closeTo(1.1, 10), prompt: row.prompt, finish_reasons: ["tool_calls", "stop"], error: null, is_completed: true });
    expect(ours.completion[0]).toEqual({ role: "assistant", content: null, tool_calls: row.completion[0]?.role === "assistant" ? row.completion[0].tool_calls : [] });
    expect(ours.tool_defs?.[0]?.function.name).toBe("multiply");
  });

  it("ends on a parent cycle and refuses an episode with no task index", () => {
    const cyclic = { ok: true, task: { data: { idx: 0 } }, traces: [{ nodes: [{ parent: 1, message: { role: "user", content: "a" } }, { parent: 0, message: { role: "assistant", content: "b" }, sampled: true }] }] };
    const ours = fromVf04Episode(cyclic, 0, "x");
    expect([...ours.prompt, ...ours.completion]).toHaveLength(2);
    expect(() => fromVf04Episode({ traces: [] }, 0, "x")).toThrow(/task\.data\.idx/);
  });

  it("marks an episode that is not ok as failed, with its last error", () => {
    const failed = { ok: false, task: { data: { idx: 1 } }, errors: [{ type: "ModelError", message: "boom" }], traces: [{ rewards: { r: null }, nodes: [] }] };
    expect(fromVf04Episode(failed, 0, "x")).toMatchObject({ reward: 0, error: { error: "ModelError", error_chain_str: "boom" }, is_completed: false });
  });

  it("on resume, records the run's own task for a row when it is the same prompt, and its own task otherwise", () => {
    const record = { type: "CalcTask", data: { idx: 3, prompt: "2*3+1?", system_prompt: "Use the tools.", skills: [], level: 2 }, key: "k", hash: "h" };
    const other = { type: "CalcTask", data: { idx: 3, prompt: [{ role: "user", content: "2*3+2?" }] }, hash: "h2" };
    const withRecord = toVf04Episode(row, spans, { ...ctx, tasks: new Map([[3, record]]) }) as Loose;
    expect(withRecord.task).toEqual(record);
    expect(withRecord.traces[0].task).toEqual(record);
    expect(fromVf04Episode(JSON.parse(JSON.stringify(withRecord)), 0, "calculator")).toEqual(row);
    expect((toVf04Episode(row, spans, { ...ctx, tasks: new Map([[3, other]]) }) as Loose).task).toMatchObject({ type: "EdgegymTask", data: { idx: 3, prompt: [{ role: "user", content: "2*3+1?" }] } });
    expect((toVf04Episode(row, spans, { ...ctx, tasks: new Map([[4, record]]) }) as Loose).task.type).toBe("EdgegymTask");
  });

  it("judges a recorded task the same as a prompt by its messages' roles and text", () => {
    const prompt = row.prompt;
    expect(vf04TaskFits({ data: { prompt: "2*3+1?" } }, prompt)).toBe(true);
    expect(vf04TaskFits({ data: { prompt: [{ role: "user", content: [{ type: "text", text: "2*3" }, { type: "text", text: "+1?" }] }], system_prompt: "Use the tools." } }, prompt)).toBe(true);
    expect(vf04TaskFits({ data: { prompt: [{ role: "system", content: "Use the tools." }, { role: "user", content: "2*3+1?" }] } }, prompt)).toBe(true);
    // Nothing recorded to compare: the row index is all there is.
    expect(vf04TaskFits({ data: { idx: 3 } }, prompt)).toBe(true);
    expect(vf04TaskFits({ data: { prompt: "2*3+1?", system_prompt: "Be terse." } }, prompt)).toBe(false);
    expect(vf04TaskFits({ data: { prompt: "2*3+1" } }, prompt)).toBe(false);
    expect(vf04TaskFits({ data: { prompt: [{ role: "assistant", content: "2*3+1?" }] } }, prompt)).toBe(false);
    expect(vf04TaskFits({ data: { prompt: [{ role: "user", content: "2*3+1?" }, { role: "user", content: "again" }] } }, prompt)).toBe(false);
  });
});
