import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { inProcessApp } from "../../../test/support/in-process.js";
import { builtinEnvs, defineRubric, defineTool, EnvRegistry, rowsDataset, toolEnv } from "../../envs/index.js";
import { createApp } from "../app.js";
import { openNodeDatabase } from "../db/node-sqlite.js";
import { chunkText } from "./routes.js";

// The ORS routes in-process: answers in the shapes the `openreward` client reads, a session
// that is an episode, calls applied once however often they are sent, errors as `{"detail"}`.
let opened: ReturnType<typeof inProcessApp>[] = [];
function app(config: Parameters<typeof inProcessApp>[0] = {}) {
  const built = inProcessApp(config);
  opened.push(built);
  const raw = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    built.app.request(path, { method, headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers }, ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }) });
  return { ...built, raw };
}
afterEach(() => {
  for (const a of opened) a.close();
  opened = [];
});

/** SSE events as the client's parser reads them (event name, data lines joined by "\n"). */
async function events(res: Response): Promise<[string, string][]> {
  const out: [string, string][] = [];
  let event: string | undefined;
  let data: string[] = [];
  for (const line of (await res.text()).split("\n")) {
    if (line === "") {
      if (event) out.push([event, data.join("\n")]);
      event = undefined;
      data = [];
    } else if (!line.startsWith(":")) {
      const [field, ...rest] = line.split(":");
      const value = rest.join(":").replace(/^ /, "");
      if (field === "event") event = value;
      else if (field === "data") data.push(value);
    }
  }
  return out;
}

/** The JSON a call's stream ends with (chunks joined), and its task id. */
// Tests index into answers of several shapes; their schemas are checked by the Python client.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function streamed(res: Response): Promise<{ taskId: string | undefined; result: any; error: string | undefined }> {
  const list = await events(res);
  // The last one: a later task id replaces an earlier one, as in the client.
  const taskId = list.filter(([e]) => e === "task_id").at(-1)?.[1];
  const error = list.find(([e]) => e === "error")?.[1];
  const body = list.filter(([e]) => e === "chunk" || e === "end").map(([, d]) => d).join("");
  return { taskId, result: body ? JSON.parse(body) : undefined, error };
}

type App = ReturnType<typeof app>;

async function openSession(a: App, env: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<string> {
  const created = await a.raw("POST", "/create_session", {}, headers);
  expect(created.headers.get("content-type")).toContain("text/event-stream");
  const [[event, sid], [end, empty]] = (await events(created)) as [[string, string], [string, string]];
  expect([event, end, empty]).toEqual(["task_id", "end", ""]);
  const create = await a.raw("POST", "/create", { env_name: env, ...body }, { "x-session-id": sid, ...headers });
  expect(create.status, await create.clone().text()).toBe(200);
  expect(await create.json()).toEqual({ sid });
  return sid;
}

const call = (a: App, env: string, sid: string, name: string, input: unknown, extra: Record<string, unknown> = {}) =>
  a.raw("POST", `/${env}/call`, { name, input, ...extra }, { "x-session-id": sid });

const reverse = (s: string) => Array.from(s).reverse().join("");

/** A tool that takes `ms` to answer `label`, and a group reward: 1 for an answer no other candidate gave. */
const slowTool = toolEnv({
  id: "test-slow-tool",
  version: "1.0.0",
  description: "A tool that waits, then answers its label.",
  tools: [
    defineTool({
      name: "wait",
      description: "Waits ms milliseconds, then answers label.",
      parameters: z.object({ ms: z.number().int().min(0).max(1000), label: z.string() }).strict(),
      run: async ({ ms, label }) => {
        await new Promise((r) => setTimeout(r, ms));
        return label;
      },
    }),
  ],
  maxTurns: 10,
  dataset: rowsDataset({ train: [{ prompt: "Wait, then answer.", answer: "done" }] }),
  rubric: defineRubric([{ name: "answered", weight: 1, fn: ({ completion, answer, parser }) => Number(parser.parseAnswer(completion) === answer) }], {
    groupRewards: [{ name: "unique", weight: 0, fn: (g) => g.map((x, i) => Number(g.every((y, j) => j === i || JSON.stringify(y.completion) !== JSON.stringify(x.completion)))) }],
  }),
});

/** An environment whose episodes own something outside the database (as a sandboxed one does). */
const boxed = toolEnv({
  id: "test-boxed",
  version: "1.0.0",
  description: "Owns a resource per episode.",
  tools: [],
  episodeResources: { release: async () => undefined },
  dataset: rowsDataset({ train: [{ prompt: "Hi.", answer: "hi" }] }),
  rubric: defineRubric([{ name: "any", weight: 1, fn: () => 1 }]),
});

describe("ORS routes", () => {
  it("lists environments, splits and tasks as the reference server does", async () => {
    const a = app();
    const envs = await (await a.raw("GET", "/list_environments")).json();
    expect(envs).toEqual(expect.arrayContaining(["reverse-text", "tic-tac-toe", "tool-math"]));
    expect(await (await a.raw("GET", "/reverse-text/splits")).json()).toEqual([
      { name: "train", type: "train" },
      { name: "eval", type: "validation" },
    ]);
    const count = await (await a.raw("POST", "/reverse-text/num_tasks", { split: "train" })).json();
    expect(count.num_tasks).toBeGreaterThan(10);
    expect(await (await a.raw("POST", "/reverse-text/task", { split: "train", index: 3 })).json()).toEqual({ task: { split: "train", index: 3 }, env_name: "reverse-text" });
    const range = await (await a.raw("POST", "/reverse-text/task_range", { split: "train", start: -2 })).json();
    expect(range.tasks).toEqual([
      { split: "train", index: count.num_tasks - 2 },
      { split: "train", index: count.num_tasks - 1 },
    ]);
    expect((await (await a.raw("POST", "/reverse-text/tasks", { split: "train" })).json()).tasks).toHaveLength(count.num_tasks);
    // A procedural split is counted (one task per index up to 2^32 − 1) and paged, never listed whole.
    expect((await (await a.raw("POST", "/tool-math/num_tasks", { split: "train" })).json()).num_tasks).toBe(2 ** 32);
    const listed = await a.raw("POST", "/tool-math/tasks", { split: "train" });
    expect([listed.status, (await listed.json()).detail]).toEqual([400, expect.stringContaining("num_tasks + get_task")]);
    const huge = await a.raw("POST", "/tool-math/task_range", { split: "train", start: 0, stop: 2 ** 32 });
    expect([huge.status, (await huge.json()).detail]).toEqual([400, expect.stringContaining("at most 10000")]);
    // Without a variant the client sends bare paths, naming the environment in X-Deployment.
    expect(await (await a.raw("GET", "/splits", undefined, { "x-deployment": "tool-math" })).json()).toEqual([
      { name: "train", type: "train" },
      { name: "eval", type: "validation" },
    ]);
    const tools = await (await a.raw("GET", "/tool-math/tools")).json();
    expect(tools.tools.map((t: { name: string }) => t.name)).toEqual(["calculator", "respond"]);
    expect(tools).toMatchObject({ terminal_tool: null, supports_score_group: true, message_block_types: ["text"] });
    expect(await (await a.raw("GET", "/version")).json()).toEqual({ version: expect.any(String), build_sha: null });
  });

  it("a session is an episode: prompt, a respond call that ends it with the reward, the transcript natively", async () => {
    const a = app();
    const sid = await openSession(a, "reverse-text", { split: "train", index: 0 });
    const prompt = await (await a.raw("GET", "/reverse-text/prompt", undefined, { "x-session-id": sid })).json();
    expect(prompt.every((b: { type: string }) => b.type === "text")).toBe(true);
    const messages = await (await a.raw("GET", "/reverse-text/messages", undefined, { "x-session-id": sid })).json();
    expect(messages.at(-1)).toMatchObject({ role: "user", blocks: [{ type: "text" }] });
    expect((await a.raw("POST", "/ping", undefined, { "x-session-id": sid })).status).toBe(200);
    const text = messages.at(-1).blocks[0].text as string;
    const res = await call(a, "reverse-text", sid, "respond", { content: `<answer>${reverse(text)}</answer>` });
    const { taskId, result } = await streamed(res);
    expect(taskId).toBe("turn-0");
    expect(result).toMatchObject({ ok: true, output: { finished: true, blocks: [] } });
    expect(result.output.reward).toBeCloseTo(1.2, 10);
    expect(result.output.metadata).toMatchObject({ episode_id: sid, turn: 1, score: { reward: result.output.reward } });
    const native = await a.call("GET", `/v1/episodes/${sid}`);
    expect([native.json.status, native.json.score.reward]).toEqual(["done", result.output.reward]);
    // After the end: refused without a step, in ORS's own refusal shape.
    const after = await streamed(await call(a, "reverse-text", sid, "respond", { content: "again" }));
    expect(after.result).toMatchObject({ ok: false, reason: "episode_finished" });
    // Delete leaves a finished episode as it is.
    expect(await (await a.raw("POST", "/delete", undefined, { "x-session-id": sid })).json()).toEqual({ sid });
    expect((await a.call("GET", `/v1/episodes/${sid}`)).json.status).toBe("done");
  });

  it("a resumed call (task_id) answers the stored step and never applies a second one", async () => {
    const a = app();
    const sid = await openSession(a, "tool-math", { task_spec: { split: "train", index: 11 } });
    const expression = "(4682 + 4613 + 6417 + 3065 + 1802 + 1707 + 4860 + 9853) / 8";
    const first = await streamed(await call(a, "tool-math", sid, "calculator", { expression }));
    expect(first.result.output).toMatchObject({ finished: false, reward: null, blocks: [{ type: "text", text: expect.any(String) }] });
    const again = await streamed(await call(a, "tool-math", sid, "calculator", { expression }, { task_id: first.taskId }));
    expect(again).toEqual(first);
    expect((await a.call("GET", `/v1/episodes/${sid}`)).json.turn).toBe(1);
    // The same task id with another call is a conflict, reported on the stream.
    const other = await streamed(await call(a, "tool-math", sid, "calculator", { expression: "1+1" }, { task_id: first.taskId }));
    expect(other.error).toMatch(/^turn_conflict: /);
    const unknown = await call(a, "tool-math", sid, "calculator", { expression }, { task_id: "turn-9" });
    expect([unknown.status, (await unknown.json()).detail]).toEqual([400, expect.stringContaining("unknown task_id")]);
    const answer = first.result.output.blocks[0].text;
    const done = await streamed(await call(a, "tool-math", sid, "respond", { content: `<answer>${answer}</answer>` }));
    expect(done.result.output.finished).toBe(true);
    // A retry of the final call reads the stored reply and the stored score.
    const doneAgain = await streamed(await call(a, "tool-math", sid, "respond", { content: `<answer>${answer}</answer>` }, { task_id: done.taskId }));
    expect(doneAgain).toEqual(done);
  });

  it("a retried create finds its episode; another task under the same id is refused", async () => {
    const a = app();
    const sid = await openSession(a, "tic-tac-toe", { split: "train", index: 2 });
    const retry = await a.raw("POST", "/create", { env_name: "tic-tac-toe", split: "train", index: 2 }, { "x-session-id": sid });
    expect([retry.status, await retry.json()]).toEqual([200, { sid }]);
    const clash = await a.raw("POST", "/create", { env_name: "tic-tac-toe", split: "train", index: 3 }, { "x-session-id": sid });
    expect([clash.status, (await clash.json()).detail]).toEqual([400, "Session already exists"]);
    // Refusals that take no step: an unknown tool, bad input to respond.
    const unknownTool = await streamed(await call(a, "tic-tac-toe", sid, "shell", { cmd: "ls" }));
    expect(unknownTool.result).toMatchObject({ ok: false, reason: "not_found" });
    const badInput = await streamed(await call(a, "tic-tac-toe", sid, "respond", { content: 5 }));
    expect(badInput.result).toMatchObject({ ok: false, reason: "input_validation" });
    const move = await streamed(await call(a, "tic-tac-toe", sid, "respond", { content: "<move>5</move>" }));
    expect(move.result.output).toMatchObject({ finished: false, reward: null, metadata: { turn: 1 } });
    expect(move.result.output.blocks[0].text).toContain("|");
    // Delete closes an episode still running.
    await a.raw("POST", "/delete", undefined, { "x-session-id": sid });
    expect((await a.call("GET", `/v1/episodes/${sid}`)).json.status).toBe("closed");
    const closed = await streamed(await call(a, "tic-tac-toe", sid, "respond", { content: "<move>1</move>" }));
    expect(closed.result).toMatchObject({ ok: false, reason: "episode_finished" });
  });

  it("bad input is a 4xx with the message in `detail`", async () => {
    const a = app();
    const noSid = await a.raw("POST", "/reverse-text/call", { name: "respond", input: {} });
    expect([noSid.status, (await noSid.json()).detail]).toEqual([400, "X-Session-ID header is required"]);
    const unknownSession = await a.raw("GET", "/reverse-text/prompt", undefined, { "x-session-id": "ep_0123456789abcdef0123456789abcdef" });
    expect([unknownSession.status, (await unknownSession.json()).code]).toEqual([404, "episode_not_found"]);
    const unknownEnv = await a.raw("GET", "/nope/splits");
    expect([unknownEnv.status, (await unknownEnv.json()).code]).toEqual([404, "env_not_found"]);
    const noEnv = await a.raw("GET", "/splits");
    expect(noEnv.status).toBe(400);
    const badSplit = await a.raw("POST", "/reverse-text/task", { split: "test", index: 0 });
    expect([badSplit.status, (await badSplit.json()).detail]).toEqual([400, expect.stringContaining("Invalid split")]);
    const badIndex = await a.raw("POST", "/reverse-text/task", { split: "train", index: -1 });
    expect([badIndex.status, (await badIndex.json()).detail]).toEqual([400, expect.stringContaining("Invalid index")]);
    const extra = await a.raw("POST", "/reverse-text/task", { split: "train", index: 0, shuffle: true });
    expect(extra.status).toBe(422);
    expect((await extra.json()).detail[0]).toMatchObject({ type: "unrecognized_keys", loc: ["body"] });
    const malformed = await a.raw("POST", "/reverse-text/task", "{nope");
    expect([malformed.status, (await malformed.json()).code]).toEqual([400, "malformed_json"]);
    const proto = await a.raw("POST", "/reverse-text/task", '{"split": "train", "index": 0, "__proto__": {}}');
    expect(proto.status).toBe(400);
    const protoCall = await a.raw("POST", "/reverse-text/call", '{"name": "respond", "input": {"__proto__": {"content": "x"}}}', { "x-session-id": "ep_0123456789abcdef0123456789abcdef" });
    expect([protoCall.status, (await protoCall.json()).code]).toEqual([400, "invalid_request"]);
    const both = await a.raw("POST", "/create", { env_name: "reverse-text", split: "train", index: 0, task_spec: { split: "train", index: 0 } }, { "x-session-id": "ep_0123456789abcdef0123456789abcdef" });
    expect(both.status).toBe(422);
    const badSid = await a.raw("POST", "/create", { env_name: "reverse-text", split: "train", index: 0 }, { "x-session-id": "my-session" });
    expect([badSid.status, (await badSid.json()).detail]).toEqual([400, expect.stringContaining("/create_session")]);
    const issued = (await events(await a.raw("POST", "/create_session", {})))[0]?.[1] ?? "";
    const toolset = await a.raw("POST", "/create", { env_name: "reverse-text", split: "train", index: 0, toolset_name: "claude-code" }, { "x-session-id": issued });
    expect([toolset.status, (await toolset.json()).detail]).toEqual([400, expect.stringContaining("unknown toolset")]);
    const overrides = await a.raw("POST", "/create_session", { env: { OPENAI_API_KEY: "x" } });
    expect(overrides.status).toBe(400);
    const group = await a.raw("POST", "/reverse-text/score_group", { candidates: [] }, { "x-session-id": "ep_0123456789abcdef0123456789abcdef" });
    expect([group.status, (await group.json()).code]).toEqual([404, "episode_not_found"]);
    const method = await a.raw("GET", "/reverse-text/call");
    expect([method.status, (await method.json()).code]).toEqual([405, "method_not_allowed"]);
  });

  it("a session is another environment's: refused on that environment's routes", async () => {
    const a = app();
    const sid = await openSession(a, "reverse-text", { split: "train", index: 0 });
    const res = await a.raw("GET", "/tool-math/prompt", undefined, { "x-session-id": sid });
    expect([res.status, (await res.json()).detail]).toEqual([400, expect.stringContaining('environment "reverse-text"')]);
  });

  it("a body over the limit is 413 before it is read", async () => {
    const a = app({ config: { bodyLimitBytes: 1000 } });
    const big = await a.raw("POST", "/reverse-text/call", { name: "respond", input: { content: "x".repeat(2000) } }, { "x-session-id": "ep_0123456789abcdef0123456789abcdef" });
    expect([big.status, (await big.json()).code]).toEqual([413, "payload_too_large"]);
  });

  it("with API keys every route needs one, as a Bearer token or X-API-Key; sessions are the tenant's own", async () => {
    const a = app({ config: { apiKeys: ["alice:sk-alice", "bob:sk-bob"] } });
    for (const [method, path] of [
      ["GET", "/list_environments"],
      ["GET", "/reverse-text/splits"],
      ["POST", "/create_session"],
      ["POST", "/reverse-text/call"],
      ["POST", "/ping"],
      ["GET", "/version"],
    ] as const) {
      const res = await a.raw(method, path);
      expect([path, res.status]).toEqual([path, 401]);
      expect((await res.json()).detail).toContain("X-API-Key");
    }
    const empty = await a.raw("GET", "/list_environments", undefined, { "x-api-key": "" });
    expect(empty.status).toBe(401);
    const wrong = await a.raw("GET", "/list_environments", undefined, { "x-api-key": "sk-nope" });
    expect(wrong.status).toBe(401);
    const alice = { "x-api-key": "sk-alice" };
    expect((await a.raw("GET", "/list_environments", undefined, { authorization: "Bearer sk-alice" })).status).toBe(200);
    const sid = await openSession(a, "reverse-text", { split: "train", index: 0 }, alice);
    const asBob = await a.raw("GET", "/reverse-text/prompt", undefined, { "x-session-id": sid, "x-api-key": "sk-bob" });
    expect(asBob.status).toBe(404);
    const bobCall = await a.raw("POST", "/reverse-text/call", { name: "respond", input: { content: "x" } }, { "x-session-id": sid, "x-api-key": "sk-bob" });
    expect(bobCall.status).toBe(404);
    // Bob cannot take over Alice's session id for an episode of his own either.
    const bobCreate = await a.raw("POST", "/create", { env_name: "reverse-text", split: "train", index: 0 }, { "x-session-id": sid, "x-api-key": "sk-bob" });
    expect([bobCreate.status, (await bobCreate.json()).detail]).toEqual([400, expect.stringContaining("/create_session")]);
    expect((await a.raw("GET", "/reverse-text/prompt", undefined, { "x-session-id": sid, ...alice })).status).toBe(200);
  });

  it("/create answers another tenant's session id exactly as an id never issued: ids cannot be probed", async () => {
    const a = app({ config: { apiKeys: ["alice:sk-alice", "bob:sk-bob"] } });
    const bob = { "x-api-key": "sk-bob" };
    const aliceSid = await openSession(a, "reverse-text", { split: "train", index: 0 }, { "x-api-key": "sk-alice" });
    // A well-formed id no /create_session gave: this moment's time prefix, then 80 bits.
    const neverIssued = `ep_${Date.now().toString(16).padStart(12, "0")}${"5a".repeat(10)}`;
    const answers = [];
    for (const [sidTried, task] of [
      [aliceSid, { split: "train", index: 0 }],
      [neverIssued, { split: "train", index: 0 }],
      [aliceSid, { split: "train", index: 1 }],
      [neverIssued, { split: "train", index: 1 }],
    ] as const) {
      const res = await a.raw("POST", "/create", { env_name: "reverse-text", ...task }, { "x-session-id": sidTried, ...bob });
      const { request_id: requestId, ...body } = await res.json();
      expect(requestId).toEqual(expect.any(String));
      answers.push({ status: res.status, headers: [...res.headers].filter(([k]) => k !== "x-request-id" && k !== "content-length"), body });
    }
    expect(answers[0]?.status).toBe(400);
    expect(answers[0]?.body).toMatchObject({ code: "invalid_request", detail: expect.stringContaining("/create_session") });
    for (const other of answers.slice(1)) expect(other).toEqual(answers[0]);
    expect((await a.raw("POST", "/ping", undefined, { "x-session-id": neverIssued, ...bob })).status).toBe(404);
  });

  it("a session id is the server's: an id the client makes up never becomes an episode id", async () => {
    const a = app();
    for (const made of ["ep_" + "0".repeat(32), `ep_${Date.now().toString(16).padStart(12, "0")}${"0".repeat(20)}`, "ep_0123456789abcdef0123456789abcdef"]) {
      const res = await a.raw("POST", "/create", { env_name: "reverse-text", split: "train", index: 0 }, { "x-session-id": made });
      expect([made, res.status, (await res.json()).code]).toEqual([made, 400, "invalid_request"]);
      expect((await a.call("GET", `/v1/episodes/${made}`)).status).toBe(404);
    }
    // An issued id, its last digit changed, is not issued either.
    const created = await a.raw("POST", "/create_session", {});
    const sid = (await events(created))[0]?.[1] ?? "";
    const altered = sid.slice(0, -1) + (sid.endsWith("0") ? "1" : "0");
    const res = await a.raw("POST", "/create", { env_name: "reverse-text", split: "train", index: 0 }, { "x-session-id": altered });
    expect(res.status).toBe(400);
    expect((await a.call("GET", `/v1/episodes/${altered}`)).status).toBe(404);
    // The id it gave works, and is the episode's.
    const ok = await a.raw("POST", "/create", { env_name: "reverse-text", split: "train", index: 0 }, { "x-session-id": sid });
    expect([ok.status, await ok.json()]).toEqual([200, { sid }]);
    expect((await a.call("GET", `/v1/episodes/${sid}`)).json.episode_id).toBe(sid);
  });

  it("score_group scores candidates as answers to the session's task, together, without a step", async () => {
    const a = app({ envs: [...builtinEnvs, slowTool, boxed] });
    const sid = await openSession(a, "reverse-text", { split: "train", index: 0 });
    const messages = await (await a.raw("GET", "/reverse-text/messages", undefined, { "x-session-id": sid })).json();
    const prompt = messages.at(-1).blocks[0].text as string;
    const right = `<answer>${reverse(prompt)}</answer>`;
    const said = (text: string) => ({ role: "assistant", blocks: [{ type: "text", text, detail: null }], detail: null });
    const res = await a.raw(
      "POST",
      "/reverse-text/score_group",
      // The client's wire: a candidate with its metadata; one repeating the prompt first; one with no answer at all.
      { candidates: [{ messages: [said(right)], metadata: { rollout: 1 } }, { messages: [{ role: "user", blocks: [{ type: "text", text: prompt }] }, said("<answer>nope</answer>")], metadata: null }, { messages: [] }] },
      { "x-session-id": sid },
    );
    const { taskId, result, error } = await streamed(res);
    expect([taskId, error]).toEqual(["score_group", undefined]);
    expect(result.scores).toHaveLength(3);
    expect(result.scores[0]).toMatchObject({ reward: expect.closeTo(1.2, 10), metadata: { candidate: { rollout: 1 }, score: { reward: result.scores[0].reward } } });
    expect(result.scores[1].reward).toBeLessThan(result.scores[0].reward);
    expect(result.scores[1].metadata.candidate).toBeNull();
    expect(result.scores[2].reward).toBe(0);
    // No step was taken; the session's own call with the same answer scores the same.
    expect((await a.call("GET", `/v1/episodes/${sid}`)).json.turn).toBe(0);
    const own = await streamed(await call(a, "reverse-text", sid, "respond", { content: right }));
    expect(own.result.output.reward).toBe(result.scores[0].reward);

    // Group rewards see the whole group: two equal answers are not unique, the third is.
    const slow = await openSession(a, "test-slow-tool", { split: "train", index: 0 });
    const group = await streamed(await a.raw("POST", "/test-slow-tool/score_group", { candidates: [[said("a")], [said("a")], [said("b")]].map((m) => ({ messages: m })) }, { "x-session-id": slow }));
    expect(group.result.scores.map((s: { metadata: { score: { metrics: Record<string, number> } } }) => s.metadata.score.metrics.unique)).toEqual([0, 0, 1]);

    // Only text blocks are taken (message_block_types), checked before any stream, as FastAPI's 422.
    const rich = await a.raw("POST", "/reverse-text/score_group", { candidates: [{ messages: [{ role: "assistant", blocks: [{ type: "reasoning", text: "hm" }] }] }] }, { "x-session-id": sid });
    expect(rich.status).toBe(422);
    // An environment whose episodes own a sandbox cannot score a transcript alone: unsupported, as the reference says it.
    const tools = await (await a.raw("GET", "/test-boxed/tools")).json();
    expect(tools.supports_score_group).toBe(false);
    const boxedSid = await openSession(a, "test-boxed", { split: "train", index: 0 });
    const refused = await a.raw("POST", "/test-boxed/score_group", { candidates: [] }, { "x-session-id": boxedSid });
    expect([refused.status, (await refused.json()).detail]).toEqual([404, expect.stringContaining("does not implement score_group")]);
  });

  it("calls sent at once on one session are taken one after the other, each its own turn", async () => {
    const a = app({ envs: [...builtinEnvs, slowTool] });
    const sid = await openSession(a, "test-slow-tool", { split: "train", index: 0 });
    // The first call's tool is the slowest, so without a queue the others would read turn 0 while it runs.
    const answers = await Promise.all([150, 20, 0].map((ms, i) => Promise.resolve(call(a, "test-slow-tool", sid, "wait", { ms, label: `call ${i}` })).then(streamed)));
    expect(answers.map((r) => r.error)).toEqual([undefined, undefined, undefined]);
    expect(answers.map((r) => [r.taskId, r.result.output.metadata.turn, r.result.output.blocks[0].text])).toEqual([
      ["turn-0", 1, "call 0"],
      ["turn-1", 2, "call 1"],
      ["turn-2", 3, "call 2"],
    ]);
    // A resume of one of them still answers its own stored step.
    const again = await streamed(await call(a, "test-slow-tool", sid, "wait", { ms: 20, label: "call 1" }, { task_id: "turn-1" }));
    expect(again.result).toEqual(answers[1]?.result);
    expect((await a.call("GET", `/v1/episodes/${sid}`)).json.turn).toBe(3);
  });

  it("a queued call whose client went away before it started is never applied", async () => {
    const a = app({ envs: [...builtinEnvs, slowTool] });
    const sid = await openSession(a, "test-slow-tool", { split: "train", index: 0 });
    const first = Promise.resolve(call(a, "test-slow-tool", sid, "wait", { ms: 200, label: "kept" })).then(streamed);
    const leaving = new AbortController();
    const queued = await a.app.request(`/test-slow-tool/call`, { method: "POST", headers: { "content-type": "application/json", "x-session-id": sid }, body: JSON.stringify({ name: "wait", input: { ms: 0, label: "dropped" } }), signal: leaving.signal });
    leaving.abort();
    await queued.body?.cancel().catch(() => undefined);
    expect((await first).result.output.metadata.turn).toBe(1);
    await new Promise((r) => setTimeout(r, 50));
    const episode = (await a.call("GET", `/v1/episodes/${sid}`)).json;
    expect(episode.turn).toBe(1);
    const next = await streamed(await call(a, "test-slow-tool", sid, "wait", { ms: 0, label: "next" }));
    expect([next.taskId, next.result.output.metadata.turn]).toEqual(["turn-1", 2]);
  });

  it("calls at once on one session through two processes (one database) each take a turn: the one beaten to its turn takes the next", async () => {
    const dir = mkdtempSync(join(tmpdir(), "edgegym-ors-two-"));
    const opened = [openNodeDatabase(join(dir, "db.sqlite")), openNodeDatabase(join(dir, "db.sqlite"))];
    try {
      const [one, two] = opened.map((database) => createApp({ db: database.db, registry: new EnvRegistry("node", [...builtinEnvs, slowTool]), config: {} }).app);
      const raw = (target: NonNullable<typeof one>, path: string, body: unknown, sid?: string) =>
        target.request(path, { method: "POST", headers: { "content-type": "application/json", ...(sid ? { "x-session-id": sid } : {}) }, body: JSON.stringify(body) });
      const sid = (await events(await raw(one!, "/create_session", {})))[0]?.[1] ?? "";
      expect((await raw(one!, "/create", { env_name: "test-slow-tool", split: "train", index: 0 }, sid)).status).toBe(200);
      // Both read turn 0; the faster tool commits turn 0 first, and the slower call moves to turn 1.
      const [slow, fast] = await Promise.all([
        Promise.resolve(raw(one!, "/test-slow-tool/call", { name: "wait", input: { ms: 150, label: "slow" } }, sid)).then(streamed),
        Promise.resolve(raw(two!, "/test-slow-tool/call", { name: "wait", input: { ms: 0, label: "fast" } }, sid)).then(streamed),
      ]);
      expect([fast.error, fast.taskId, fast.result.output.metadata.turn]).toEqual([undefined, "turn-0", 1]);
      expect([slow.error, slow.taskId, slow.result.output.metadata.turn, slow.result.output.blocks[0].text]).toEqual([undefined, "turn-1", 2, "slow"]);
    } finally {
      for (const database of opened) database.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("chunks never split a surrogate pair", () => {
    const text = "a😀".repeat(5);
    for (const size of [1, 2, 3, 4]) {
      const pieces = chunkText(text, Math.max(size, 2));
      expect(pieces.join("")).toBe(text);
      // A lone surrogate does not survive UTF-8: it comes back as U+FFFD.
      for (const p of pieces) expect(new TextDecoder().decode(new TextEncoder().encode(p))).toBe(p);
    }
  });
});
