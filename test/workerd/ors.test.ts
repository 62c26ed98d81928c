import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/server/worker/index.js";

// The ORS wire inside workerd over D1: a session opened over server-sent events, a tool call
// streamed back, its resume by task id, calls sent at once, group scoring, and errors in
// FastAPI's `detail` shape.

const request = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
  const init: RequestInit = { method, headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers } };
  if (body !== undefined) init.body = JSON.stringify(body);
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(`http://edgegym.test${path}`, init), env, ctx);
  const text = await res.text();
  await waitOnExecutionContext(ctx);
  return { status: res.status, type: res.headers.get("content-type") ?? "", text };
};

/** The SSE events of a body: [event, data] pairs (comment lines skipped). */
const events = (text: string): [string, string][] =>
  text
    .split("\n\n")
    .filter((block) => block.includes("event:"))
    .map((block) => {
      const lines = block.split("\n").filter((l) => !l.startsWith(":"));
      const event = lines.find((l) => l.startsWith("event:"))?.slice(6).trim() ?? "";
      const data = lines.filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, "")).join("\n");
      return [event, data];
    });

describe("the ORS wire on the Worker", () => {
  it("opens a session, calls a tool and the reply tool, resumes a call, and refuses bad input", async () => {
    const created = await request("POST", "/create_session", {});
    expect(created.type).toContain("text/event-stream");
    const sid = events(created.text)[0]?.[1] ?? "";
    expect(sid).toMatch(/^ep_[0-9a-f]{32}$/);
    const create = await request("POST", "/create", { env_name: "tool-math", split: "train", index: 11 }, { "x-session-id": sid });
    expect([create.status, JSON.parse(create.text)]).toEqual([200, { sid }]);

    const expression = "(4682 + 4613 + 6417 + 3065 + 1802 + 1707 + 4860 + 9853) / 8";
    const first = await request("POST", "/tool-math/call", { name: "calculator", input: { expression } }, { "x-session-id": sid });
    const firstEvents = events(first.text);
    expect(firstEvents.map(([e]) => e)).toEqual(["task_id", "end"]);
    const output = JSON.parse(firstEvents[1]?.[1] ?? "{}");
    expect(output).toMatchObject({ ok: true, output: { finished: false, reward: null, blocks: [{ type: "text", text: "4624.875" }] } });
    const resumed = await request("POST", "/tool-math/call", { name: "calculator", input: { expression }, task_id: "turn-0" }, { "x-session-id": sid });
    expect(events(resumed.text)).toEqual(firstEvents);

    const done = await request("POST", "/call", { name: "respond", input: { content: "<answer>4624.875</answer>" } }, { "x-session-id": sid, "x-deployment": "tool-math" });
    const final = JSON.parse(events(done.text).at(-1)?.[1] ?? "{}");
    expect(final.output).toMatchObject({ finished: true, metadata: { turn: 2 } });
    expect(final.output.reward).toBeCloseTo(1.1, 10);

    const unknown = await request("GET", "/tool-math/prompt", undefined, { "x-session-id": "ep_0123456789abcdef0123456789abcdef" });
    expect([unknown.status, JSON.parse(unknown.text).code]).toEqual([404, "episode_not_found"]);
    const invalid = await request("POST", "/tool-math/task", { split: "train" });
    expect([invalid.status, JSON.parse(invalid.text).detail[0].loc]).toEqual([422, ["body", "index"]]);
  });

  const open = async (envName: string, index: number): Promise<string> => {
    const sid = events((await request("POST", "/create_session", {})).text)[0]?.[1] ?? "";
    expect((await request("POST", "/create", { env_name: envName, split: "train", index }, { "x-session-id": sid })).status).toBe(200);
    return sid;
  };

  it("takes calls sent at once on one session one after the other, each its own turn", async () => {
    const sid = await open("tool-math", 11);
    const answers = await Promise.all([1, 2, 3].map((n) => request("POST", "/tool-math/call", { name: "calculator", input: { expression: `${n} + ${n}` } }, { "x-session-id": sid })));
    const outputs = answers.map((a) => events(a.text)).map((list) => ({ kinds: list.map(([e]) => e), output: JSON.parse(list.at(-1)?.[1] ?? "{}").output }));
    expect(outputs.map((o) => o.kinds)).toEqual([["task_id", "end"], ["task_id", "end"], ["task_id", "end"]]);
    expect(outputs.map((o) => [o.output.metadata.turn, o.output.blocks[0].text])).toEqual([
      [1, "2"],
      [2, "4"],
      [3, "6"],
    ]);
  });

  it("scores a group of candidates against the session's task without a step", async () => {
    const sid = await open("reverse-text", 0);
    const messages = JSON.parse((await request("GET", "/reverse-text/messages", undefined, { "x-session-id": sid })).text);
    const prompt = messages.at(-1).blocks[0].text as string;
    const said = (text: string) => ({ messages: [{ role: "assistant", blocks: [{ type: "text", text }] }] });
    const res = await request("POST", "/reverse-text/score_group", { candidates: [said(`<answer>${Array.from(prompt).reverse().join("")}</answer>`), said("<answer>no</answer>")] }, { "x-session-id": sid });
    const list = events(res.text);
    expect(list.map(([e]) => e)).toEqual(["task_id", "end"]);
    const { scores } = JSON.parse(list[1]?.[1] ?? "{}");
    expect(scores[0].reward).toBeCloseTo(1.2, 10);
    expect(scores[1].reward).toBeLessThan(scores[0].reward);
    const tools = JSON.parse((await request("GET", "/reverse-text/task_tools", undefined, { "x-session-id": sid })).text);
    expect(tools.supports_score_group).toBe(true);
  });
});
