import { ChatMessage, contentText, EvalRollout, type EvalRolloutError, type EvalTiming, type ToolDefinition } from "../protocol/index.js";
import type { TimedSpan } from "./rollout.js";
import { CLIENT_SEAT_PLAYER, rolloutSeats, type RolloutSeat } from "./seats.js";

/**
 * The two generations of verifiers' `vf-eval` run files, written and read here.
 *
 * - `vf03`: verifiers 0.3.x (`verifiers.legacy`): `results.jsonl`, one `RolloutOutput` a
 *   line, and `metadata.json`. Its `timing` is a `RolloutTiming` in seconds: `setup`,
 *   `generation`, `scoring` are `TimeSpan`s `{start, end, duration}` (Unix seconds),
 *   `model` and `env` are `TimeSpans` `{spans: [...], duration}`, plus `start_time`,
 *   `total` (scoring end − generation start, 0 when scoring never ran) and `overhead`
 *   (total − setup − model − env − scoring) — `verifiers/legacy/types.py` of 0.3.1;
 *   its printer and progress display read a dict's `duration`, a number as is
 *   (`print_timing` in `verifiers/legacy/utils/eval_utils.py`).
 * - `vf04`: verifiers 0.4 (`verifiers.v1`): `traces.jsonl`, one `Episode` a line
 *   (`verifiers/v1/episode.py`, `trace.py`), each holding one `Trace` per agent with the
 *   conversation as a message graph (`nodes`, each pointing at its `parent`), named
 *   weighted `rewards`, `metrics`, and `timing` `{start, boot, setup, agent: {start, end,
 *   model: {duration}, harness: {duration}}, finalize, scoring}` in seconds.
 *
 * edgegym writes both with its own fields kept (rollout_index, seed, the summed `*_ms`)
 * so its own `--resume`, `export-sft` and `rescore` read them back; runs vf-eval wrote lack
 * those, and `fromVf03Row` / `fromVf04Episode` fill them in.
 */
export type VfFormat = "vf03" | "vf04";
export const VF_FORMATS: readonly VfFormat[] = ["vf03", "vf04"];

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = Record<string, unknown>;

const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);
const num = (v: unknown, fallback = 0): number => (typeof v === "number" && Number.isFinite(v) ? v : fallback);

interface Span03 {
  start: number;
  end: number;
  duration: number;
}

function span03(start: number, end: number): Span03 {
  return { start, end, duration: end > 0 ? end - start : 0 };
}

/** verifiers 0.3's nested `RolloutTiming` (seconds) from the phases a rollout timed. */
export function vf03Timing(timing: EvalTiming, spans: readonly TimedSpan[]): JsonObject {
  const reset = spans.find((s) => s.kind === "reset");
  const score = spans.find((s) => s.kind === "score");
  const model = spans.filter((s) => s.kind === "model").map((s) => span03(s.start, s.end));
  const env = spans.filter((s) => s.kind === "step").map((s) => span03(s.start, s.end));
  const loop = spans.filter((s) => s.kind !== "score");
  // verifiers' `generation` runs from before set-up to the end of the last turn (scoring excluded).
  const generation = loop.length ? span03((loop[0] as TimedSpan).start, Math.max(...loop.map((s) => s.end))) : span03(timing.start_time, 0);
  const setup = reset ? span03(reset.start, reset.end) : span03(0, 0);
  const scoring = score ? span03(score.start, score.end) : span03(0, 0);
  const sum = (list: Span03[]): number => list.reduce((a, s) => a + s.duration, 0);
  const total = scoring.end > 0 ? scoring.end - generation.start : 0;
  return {
    ...timing,
    setup,
    generation,
    scoring,
    model: { spans: model, duration: sum(model) },
    env: { spans: env, duration: sum(env) },
    total,
    // Floating-point sums can leave a hair below zero; verifiers' own overhead is never negative in practice.
    overhead: Math.max(0, total - setup.duration - sum(model) - sum(env) - scoring.duration),
  };
}

/** A results.jsonl row in verifiers 0.3's shape: edgegym's row with its timing nested as verifiers reads it. */
export function toVf03Row(row: EvalRollout, spans: readonly TimedSpan[]): JsonObject {
  return { ...row, timing: vf03Timing(row.timing, spans) };
}

/** edgegym's flat timing from either shape (a vf-eval row has only the nested one, in seconds). */
function flatTiming(raw: unknown): EvalTiming {
  const t = isObject(raw) ? raw : {};
  const dur = (v: unknown): number => (isObject(v) ? num(v.duration) : num(v));
  if (typeof t.total_ms === "number") {
    return { start_time: num(t.start_time), generation_ms: num(t.generation_ms), env_ms: num(t.env_ms), scoring_ms: num(t.scoring_ms), total_ms: num(t.total_ms) };
  }
  return {
    start_time: num(t.start_time),
    generation_ms: dur(t.model) * 1000,
    env_ms: (dur(t.setup) + dur(t.env)) * 1000,
    scoring_ms: dur(t.scoring) * 1000,
    total_ms: dur(t.total) * 1000,
  };
}

/** A results.jsonl row with verifiers 0.3's nested timing folded into edgegym's flat one; everything else as it was. */
export function withFlatTiming(raw: unknown): unknown {
  return isObject(raw) && isObject(raw.timing) ? { ...raw, timing: flatTiming(raw.timing) } : raw;
}

function messages(raw: unknown): ChatMessage[] {
  if (typeof raw === "string") return [{ role: "user", content: raw }];
  if (!Array.isArray(raw)) return [];
  const out: ChatMessage[] = [];
  for (const m of raw) {
    const parsed = ChatMessage.safeParse(m);
    if (parsed.success) out.push(parsed.data);
    else if (isObject(m) && typeof m.role === "string") out.push(looseMessage(m));
  }
  return out;
}

/** A message a peer wrote with fields edgegym's schema does not know: keep role, text and tool calls. */
function looseMessage(m: JsonObject): ChatMessage {
  const content = typeof m.content === "string" ? m.content : Array.isArray(m.content) ? contentText(m.content.filter(isObject).map((p) => ({ type: "text" as const, text: String(p.text ?? "") }))) : "";
  if (m.role === "assistant") {
    const calls = Array.isArray(m.tool_calls) ? m.tool_calls.filter(isObject).map(toolCallFrom) : [];
    return { role: "assistant", content: m.content === null ? null : content, ...(calls.length ? { tool_calls: calls } : {}) };
  }
  if (m.role === "tool") return { role: "tool", content, tool_call_id: String(m.tool_call_id ?? "") };
  if (m.role === "system") return { role: "system", content };
  return { role: "user", content };
}

/** OpenAI's nested tool call from either shape (verifiers 0.4 writes `{id, name, arguments}` flat). */
function toolCallFrom(c: JsonObject): { id: string; type: "function"; function: { name: string; arguments: string } } {
  const fn = isObject(c.function) ? c.function : c;
  const args = fn.arguments;
  return { id: String(c.id ?? ""), type: "function", function: { name: String(fn.name ?? ""), arguments: typeof args === "string" ? args : JSON.stringify(args ?? {}) } };
}

function errorFrom(raw: unknown): EvalRolloutError | null {
  if (raw === null || raw === undefined) return null;
  if (!isObject(raw)) return { error: "vf_error", error_chain_str: String(raw), error_chain_repr: String(raw), attempts: 1 };
  const text = String(raw.error_chain_str ?? raw.message ?? raw.error ?? "error");
  return { error: String(raw.error ?? raw.type ?? "vf_error"), error_chain_str: text, error_chain_repr: String(raw.error_chain_repr ?? text), attempts: num(raw.attempts, 1) };
}

function numberRecord(raw: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (isObject(raw)) for (const [k, v] of Object.entries(raw)) if (typeof v === "number" && Number.isFinite(v)) out[k] = v;
  return out;
}

/**
 * A results.jsonl row — edgegym's (either timing) or one verifiers 0.3's vf-eval wrote —
 * as an edgegym rollout. `rolloutIndex` is used when the row has none (vf-eval numbers
 * a row's rollouts only by their order in the file). Throws on a row with no example id.
 */
export function fromVf03Row(raw: unknown, rolloutIndex: number, envId: string): EvalRollout {
  if (!isObject(raw)) throw new Error("a results.jsonl row must be a JSON object");
  const exampleId = raw.example_id;
  if (typeof exampleId !== "number" || !Number.isInteger(exampleId)) throw new Error(`a results.jsonl row has no integer example_id (got ${JSON.stringify(exampleId)})`);
  const metrics = numberRecord(raw.metrics);
  const usage = isObject(raw.token_usage) ? raw.token_usage : {};
  const row: EvalRollout = {
    ...raw,
    example_id: exampleId,
    rollout_index: typeof raw.rollout_index === "number" ? raw.rollout_index : rolloutIndex,
    task: typeof raw.task === "string" ? raw.task : envId,
    prompt: messages(raw.prompt),
    completion: messages(raw.completion),
    info: isObject(raw.info) ? raw.info : {},
    reward: num(raw.reward),
    metrics,
    components: Array.isArray(raw.components) ? (raw.components as EvalRollout["components"]) : [],
    stop_condition: typeof raw.stop_condition === "string" ? raw.stop_condition : null,
    // Older vf-eval rows have no is_completed: finished unless they carry an error.
    is_completed: raw.is_completed === undefined ? raw.error === null || raw.error === undefined : raw.is_completed === true,
    is_truncated: raw.is_truncated === true,
    finish_reasons: Array.isArray(raw.finish_reasons) ? raw.finish_reasons.map(String) : [],
    error: errorFrom(raw.error),
    timing: flatTiming(raw.timing),
    token_usage: { input_tokens: num(usage.input_tokens), output_tokens: num(usage.output_tokens) },
    seed: typeof raw.seed === "number" && Number.isInteger(raw.seed) ? raw.seed : 0,
    episode_id: typeof raw.episode_id === "string" ? raw.episode_id : null,
  };
  if (typeof raw.answer === "string") row.answer = raw.answer;
  else delete row.answer;
  if (Array.isArray(raw.tool_defs) && raw.tool_defs.length) row.tool_defs = raw.tool_defs.filter(isObject).map(toolDefFrom);
  else delete row.tool_defs;
  return row;
}

function toolDefFrom(t: JsonObject): ToolDefinition {
  const fn = isObject(t.function) ? t.function : t;
  return {
    type: "function",
    function: {
      name: String(fn.name ?? ""),
      ...(typeof fn.description === "string" ? { description: fn.description } : {}),
      parameters: isObject(fn.parameters) ? fn.parameters : {},
      ...(typeof fn.strict === "boolean" ? { strict: fn.strict } : {}),
    },
  };
}

// ---------------------------------------------------------------- verifiers 0.4 (v1)

/** The run-level facts a 0.4 episode records beside each rollout. */
export interface Vf04Context {
  envId: string;
  model: string;
  /** The run's id (edgegym's run directory name): `episode.run.id`. */
  runId: string;
  sampling: Record<string, unknown>;
  /** Episode/trace ids: random hex (injectable for tests). */
  newId: () => string;
  /**
   * On resume, the `task` the run's own episodes recorded for each row (`task.data.idx`).
   * An episode for such a row records that task instead of edgegym's, when it is the same
   * task (`vf04TaskFits`): verifiers' resume planner matches episodes to its tasks by
   * `task.hash` (or the hash of `task.data` when there is none), so only then does it count
   * the episode as done for its task.
   */
  tasks?: ReadonlyMap<number, JsonObject>;
}

/** A verifiers 0.4 prompt (`TaskData.prompt`: a string, a message list or unset) as role + text. */
function promptLines(prompt: unknown): { role: string; text: string }[] {
  if (typeof prompt === "string") return [{ role: "user", text: prompt }];
  if (!Array.isArray(prompt)) return [];
  return prompt.filter(isObject).map((m) => ({
    role: String(m.role ?? ""),
    text: typeof m.content === "string" ? m.content : Array.isArray(m.content) ? m.content.filter(isObject).map((p) => (typeof p.text === "string" ? p.text : "")).join("") : "",
  }));
}

/**
 * Whether a task verifiers recorded (`{type, data, key?, hash?}`) is the task of this prompt:
 * the same non-system messages (role and text) and, when both have one, the same system
 * prompt (`data.system_prompt` or a leading system message). A record with no prompt at all
 * has nothing to contradict it. The episodes edgegym adds to a verifiers run record the
 * run's task only when it fits: crediting a rollout of another prompt to it would be false.
 */
export function vf04TaskFits(record: JsonObject, prompt: readonly ChatMessage[]): boolean {
  const data = isObject(record.data) ? record.data : {};
  const theirs = [...(typeof data.system_prompt === "string" ? [{ role: "system", text: data.system_prompt }] : []), ...promptLines(data.prompt)];
  if (!theirs.length) return true;
  const ours = prompt.map((m) => ({ role: m.role as string, text: contentText(m.content) }));
  const body = (list: { role: string; text: string }[]) => list.filter((m) => m.role !== "system");
  const system = (list: { role: string; text: string }[]) => list.filter((m) => m.role === "system").map((m) => m.text);
  const same = (a: { role: string; text: string }[], b: { role: string; text: string }[]) => a.length === b.length && a.every((m, i) => m.role === b[i]?.role && m.text === b[i]?.text);
  if (!same(body(theirs), body(ours))) return false;
  const [a, b] = [system(theirs), system(ours)];
  return !a.length || !b.length || (a.length === b.length && a.every((t, i) => t === b[i]));
}

/** `task.type` of the episodes edgegym writes with its own task data. */
export const EDGEGYM_TASK_TYPE = "EdgegymTask";

const tsSpan = (start: number, end: number): { start: number; end: number } => ({ start, end });

/** A message in verifiers 0.4's shape: tool calls flat (`{id, type, name, arguments}`). */
function vf04Message(m: ChatMessage): JsonObject {
  if (m.role === "assistant") {
    const { tool_calls: calls, name: _name, ...rest } = m;
    return {
      ...rest,
      content: m.content === undefined || m.content === null ? null : contentText(m.content),
      ...(calls?.length ? { tool_calls: calls.map((c) => ({ id: c.id, type: "function", name: c.function.name, arguments: c.function.arguments })) } : {}),
    };
  }
  if (m.role === "tool") return { role: "tool", tool_call_id: m.tool_call_id, content: m.content };
  return { role: m.role, content: m.content };
}

function vf04Tool(t: ToolDefinition): JsonObject {
  return {
    type: "function",
    name: t.function.name,
    description: t.function.description ?? "",
    parameters: t.function.parameters,
    ...(t.function.strict !== undefined ? { strict: t.function.strict } : {}),
  };
}

/**
 * One `traces.jsonl` line in verifiers 0.4's `Episode` shape for an edgegym rollout:
 * one trace (agent "agent"), its conversation as a chain of nodes, the rubric's components
 * as named weighted rewards, edgegym's own fields under `trace.info.edgegym` (what
 * `--resume`, `rescore` and `export-sft` read back) and `task.data.idx` = the row index.
 */
export function toVf04Episode(row: EvalRollout, spans: readonly TimedSpan[], ctx: Vf04Context): JsonObject {
  const stamp = row.timing.start_time;
  // verifiers 0.4 keeps a leading system prompt apart (`TaskData.system_prompt`) from the prompt messages.
  const head = row.prompt[0];
  const systemPrompt = head?.role === "system" && typeof head.content === "string" ? head.content : undefined;
  const prompt = (systemPrompt !== undefined ? row.prompt.slice(1) : row.prompt).map(vf04Message);
  const tools = (row.tool_defs ?? []).map(vf04Tool);
  const model = spans.filter((s) => s.kind === "model");
  const ok = row.error === null && row.is_completed;
  const errors = row.error ? [{ type: row.error.error, message: row.error.error_chain_str }] : [];
  const { prompt: _p, completion: _c, timing: _t, ...kept } = row;
  // A seated rollout: one trace per seat the model played (verifiers 0.4's multi-agent episode), the first seat's first.
  const seats = rolloutSeats(row);
  const modelSeats = Object.entries(seats ?? {}).filter(([, s]) => s.player === CLIENT_SEAT_PLAYER && s.prompt !== undefined);
  const primary = modelSeats[0]?.[0];
  if (seats) {
    // Each seat's conversation is its trace's nodes: edgegym's record keeps the rest of the seat.
    kept.seats = Object.fromEntries(Object.entries(seats).map(([name, { prompt: _sp, completion: _sc, ...rest }]) => [name, rest]));
  }
  // Resuming a verifiers run: its own record of this row's task, so its planner counts the episode.
  const recorded = ctx.tasks?.get(row.example_id);
  const task = recorded && vf04TaskFits(recorded, row.prompt) ? recorded : {
    type: EDGEGYM_TASK_TYPE,
    data: {
      idx: row.example_id,
      prompt,
      ...(systemPrompt !== undefined ? { system_prompt: systemPrompt } : {}),
      ...(row.answer !== undefined ? { answer: row.answer } : {}),
      info: row.info,
    },
  };
  const reset = spans.find((s) => s.kind === "reset");
  const score = spans.find((s) => s.kind === "score");
  const agentSpans = spans.filter((s) => s.kind === "model" || s.kind === "step");
  const timing = {
    start: stamp,
    boot: tsSpan(0, 0),
    setup: reset ? tsSpan(reset.start, reset.end) : tsSpan(0, 0),
    agent: {
      ...(agentSpans.length ? tsSpan((agentSpans[0] as TimedSpan).start, Math.max(...agentSpans.map((s) => s.end))) : tsSpan(0, 0)),
      model: { duration: row.timing.generation_ms / 1000 },
      harness: { duration: Math.max(0, row.timing.env_ms - (reset ? (reset.end - reset.start) * 1000 : 0)) / 1000 },
    },
    finalize: tsSpan(0, 0),
    scoring: score ? tsSpan(score.start, score.end) : tsSpan(0, 0),
  };
  const trace = (agent: string, messages: readonly ChatMessage[], promptLength: number, scored: Pick<RolloutSeat, "components" | "metrics">, seat: string | undefined, first: boolean): JsonObject => {
    const nodes = messages.map((m, i) => ({
      ...(i > 0 ? { parent: i - 1 } : {}),
      ...(i === 0 && tools.length ? { tools } : {}),
      message: vf04Message(m),
      sampled: i >= promptLength && m.role === "assistant",
      timestamp: stamp,
    }));
    // One model call per assistant node the model produced, with its finish reason and span (a seat's own, in a seated rollout).
    const mine = model.map((span, i) => ({ span, finish: row.finish_reasons[i] })).filter(({ span }) => seat === undefined || span.seat === seat);
    const calls: JsonObject[] = [];
    let turn = 0;
    nodes.forEach((node, i) => {
      if (!node.sampled) return;
      const { span, finish } = mine[turn] ?? {};
      calls.push({
        node: i,
        model: ctx.model,
        ...(finish === "stop" || finish === "length" || finish === "tool_calls" ? { finish_reason: finish } : {}),
        time: span ? tsSpan(span.start, span.end) : tsSpan(0, 0),
      });
      turn++;
    });
    const rewards: Record<string, { score: number; weight: number } | null> = {};
    for (const c of scored.components) rewards[c.name] = c.error ? null : { score: c.score, weight: c.weight };
    const componentNames = new Set(scored.components.map((c) => c.name));
    const metrics: Record<string, number> = {};
    for (const [k, v] of Object.entries(scored.metrics)) if (!componentNames.has(k)) metrics[k] = v;
    return {
      version: 1,
      id: ctx.newId(),
      task,
      agent: { config: { model: ctx.model, ...(Object.keys(ctx.sampling).length ? { sampling: samplingFor04(ctx.sampling) } : {}) }, name: agent, trainable: true },
      tools,
      nodes,
      calls,
      rewards,
      metrics,
      // edgegym's own record of the row rides on the first trace only.
      info: first ? { edgegym: { ...kept, timing: row.timing } } : { edgegym: { seat } },
      is_completed: row.is_completed,
      ok,
      stop_condition: row.stop_condition,
      is_timeout: false,
      errors,
      timing,
    };
  };
  const traces = [trace(primary ?? "agent", [...row.prompt, ...row.completion], row.prompt.length, row, primary, true)];
  for (const [name, s] of modelSeats.slice(1)) traces.push(trace(name, [...(s.prompt ?? []), ...(s.completion ?? [])], s.prompt?.length ?? 0, s, name, false));
  return {
    id: ctx.newId(),
    env: { id: ctx.envId },
    task,
    group: { id: String(row.example_id) },
    run: { type: "eval", id: ctx.runId },
    ok,
    is_timeout: false,
    errors,
    traces,
  };
}

/** verifiers 0.4's `SamplingConfig` knows temperature, top_p, reasoning_effort, max_tokens; the rest stays with edgegym's metadata. */
function samplingFor04(sampling: Record<string, unknown>): JsonObject {
  const out: JsonObject = {};
  for (const key of ["temperature", "top_p", "reasoning_effort", "max_tokens"]) if (sampling[key] !== undefined) out[key] = sampling[key];
  return out;
}

/**
 * A `traces.jsonl` episode — edgegym's or one verifiers 0.4 wrote — as an edgegym rollout:
 * the first trace's main branch (leaf to root through `parent`) split into prompt (the
 * messages before the first sampled one) and completion, reward = Σ score × weight of its
 * rewards (verifiers' `Trace.reward`), the row index from `task.data.idx`. edgegym's own
 * fields, when present under `trace.info.edgegym`, win. `rolloutIndex` is used when the
 * episode has none (order of its row's episodes in the file).
 */
export function fromVf04Episode(raw: unknown, rolloutIndex: number, envId: string): EvalRollout {
  if (!isObject(raw)) throw new Error("a traces.jsonl line must be a JSON object");
  const task = isObject(raw.task) ? raw.task : {};
  const data = isObject(task.data) ? task.data : {};
  const traces = Array.isArray(raw.traces) ? raw.traces.filter(isObject) : [];
  const trace = traces[0];
  const idx = data.idx;
  if (typeof idx !== "number" || !Number.isInteger(idx)) throw new Error(`a traces.jsonl episode has no integer task.data.idx (got ${JSON.stringify(idx)})`);
  const own = trace && isObject(trace.info) && isObject(trace.info.edgegym) ? trace.info.edgegym : null;
  const main = traceConversation(trace);
  let prompt = main.prompt;
  if (!prompt.length) prompt = [...(typeof data.system_prompt === "string" ? [{ role: "system" as const, content: data.system_prompt }] : []), ...messages(data.prompt)];
  const completion = main.completion;
  const rewards = trace && isObject(trace.rewards) ? trace.rewards : {};
  const components: EvalRollout["components"] = [];
  let reward = 0;
  for (const [name, r] of Object.entries(rewards)) {
    if (!isObject(r)) continue;
    const score = num(r.score);
    const weight = num(r.weight, 1);
    components.push({ name, weight, score });
    reward += score * weight;
  }
  const metrics: Record<string, number> = {};
  for (const c of components) metrics[c.name] = c.score;
  Object.assign(metrics, numberRecord(trace?.metrics));
  const errs = [...(Array.isArray(raw.errors) ? raw.errors : []), ...(trace && Array.isArray(trace.errors) ? trace.errors : [])].filter(isObject);
  const lastError = errs[errs.length - 1];
  const error: EvalRolloutError | null = raw.ok === true ? null : lastError ? errorFrom({ error: lastError.type, message: lastError.message }) : { error: "vf_not_ok", error_chain_str: "the episode did not finish ok", error_chain_repr: "the episode did not finish ok", attempts: 1 };
  const timing = isObject(trace?.timing) ? trace.timing : {};
  const dur = (v: unknown): number => (isObject(v) && num(v.end) > 0 ? Math.max(0, num(v.end) - num(v.start)) : 0);
  const agent = isObject(timing.agent) ? timing.agent : {};
  const scoringEnd = isObject(timing.scoring) ? num(timing.scoring.end) : 0;
  const agentEnd = num(agent.end);
  const calls = trace && Array.isArray(trace.calls) ? trace.calls.filter(isObject) : [];
  let inputTokens = 0;
  let outputTokens = 0;
  for (const c of calls) if (isObject(c.usage)) {
    inputTokens += num(c.usage.prompt_tokens);
    outputTokens += num(c.usage.completion_tokens);
  }
  const tools = trace && Array.isArray(trace.tools) ? trace.tools.filter(isObject).map(toolDefFrom) : [];
  const row: EvalRollout = {
    example_id: idx,
    rollout_index: rolloutIndex,
    task: isObject(raw.env) && typeof raw.env.id === "string" && raw.env.id ? raw.env.id : envId,
    prompt,
    completion,
    ...(typeof data.answer === "string" && data.answer ? { answer: data.answer } : {}),
    info: isObject(data.info) ? data.info : {},
    reward: error ? 0 : reward,
    metrics,
    components,
    stop_condition: typeof trace?.stop_condition === "string" ? trace.stop_condition : null,
    is_completed: trace?.is_completed === true,
    is_truncated: calls.some((c) => c.finish_reason === "length"),
    finish_reasons: calls.map((c) => (typeof c.finish_reason === "string" ? c.finish_reason : "unknown")),
    error,
    timing: {
      start_time: num(timing.start),
      generation_ms: (isObject(agent.model) ? num(agent.model.duration) : 0) * 1000,
      env_ms: (dur(timing.setup) + (isObject(agent.harness) ? num(agent.harness.duration) : 0)) * 1000,
      scoring_ms: dur(timing.scoring) * 1000,
      total_ms: Math.max(0, (scoringEnd || agentEnd) - num(timing.start)) * 1000,
    },
    token_usage: { input_tokens: inputTokens, output_tokens: outputTokens },
    seed: 0,
    episode_id: null,
    ...(tools.length ? { tool_defs: tools } : {}),
  };
  if (own) {
    // edgegym wrote this episode: its own record is exact (resume key, seed, timings, errors).
    const parsed = EvalRollout.safeParse({ ...own, prompt: row.prompt, completion: row.completion, ...(isObject(own.seats) ? { seats: seatsWithConversations(own.seats, traces, row) } : {}) });
    if (parsed.success) return parsed.data;
  }
  return row;
}

/** A trace's main branch (leaf to root through `parent`), split into prompt (before the first sampled message) and completion. */
function traceConversation(trace: JsonObject | undefined): { prompt: ChatMessage[]; completion: ChatMessage[] } {
  const nodes = trace && Array.isArray(trace.nodes) ? trace.nodes.filter(isObject) : [];
  const path: JsonObject[] = [];
  const seen = new Set<number>();
  for (let at: number | undefined = nodes.length - 1; at !== undefined && at >= 0 && !seen.has(at); ) {
    seen.add(at);
    const node = nodes[at] as JsonObject;
    path.unshift(node);
    at = typeof node.parent === "number" ? node.parent : undefined;
  }
  const firstSampled = path.findIndex((n) => n.sampled === true);
  const split = firstSampled < 0 ? path.length : firstSampled;
  const toMsgs = (list: JsonObject[]): ChatMessage[] => messages(list.map((n) => n.message).filter(isObject));
  return { prompt: toMsgs(path.slice(0, split)), completion: toMsgs(path.slice(split)) };
}

/** A seated row's `seats` as edgegym recorded them, each model seat's conversation read back from its trace (the first trace: the row's own). */
function seatsWithConversations(seats: JsonObject, traces: readonly JsonObject[], row: EvalRollout): JsonObject {
  const out: JsonObject = {};
  for (const [name, raw] of Object.entries(seats)) {
    if (!isObject(raw)) continue;
    const index = traces.findIndex((t) => isObject(t.agent) && t.agent.name === name);
    const conversation = index === 0 ? { prompt: row.prompt, completion: row.completion } : index > 0 ? traceConversation(traces[index]) : null;
    out[name] = conversation ? { ...raw, ...conversation } : raw;
  }
  return out;
}

/** Whether a parsed JSON value is a verifiers 0.4 episode line (what its resume keeps: rows with `traces`). */
export function isVf04Episode(raw: unknown): boolean {
  return isObject(raw) && Array.isArray(raw.traces);
}

export type { Json };
