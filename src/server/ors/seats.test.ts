import { afterEach, describe, expect, it } from "vitest";
import { inProcessApp } from "../../../test/support/in-process.js";

// Seats on the ORS wire: a session plays the one seat a client plays (the others are the
// environment's policies, chosen in task_spec.seats); everything it reads is that seat's
// view; an episode with more than one client seat is refused before anything starts.
let opened: ReturnType<typeof inProcessApp>[] = [];
function app() {
  const built = inProcessApp();
  opened.push(built);
  const raw = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    built.app.request(path, { method, headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return { ...built, raw };
}
afterEach(() => {
  for (const a of opened) a.close();
  opened = [];
});
type App = ReturnType<typeof app>;

/** The events of an SSE answer, as the client's parser reads them. */
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

async function newSid(a: App): Promise<string> {
  const [[, sid]] = (await events(await a.raw("POST", "/create_session", {}))) as [[string, string]];
  return sid;
}

const create = (a: App, sid: string, body: Record<string, unknown>) => a.raw("POST", "/create", body, { "x-session-id": sid });

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are asserted field by field
async function respond(a: App, env: string, sid: string, content: string): Promise<{ result: any; error: string | undefined }> {
  const list = await events(await a.raw("POST", `/${env}/call`, { name: "respond", input: { content } }, { "x-session-id": sid }));
  const body = list.filter(([e]) => e === "chunk" || e === "end").map(([, d]) => d).join("");
  return { result: body ? JSON.parse(body) : undefined, error: list.find(([e]) => e === "error")?.[1] };
}

const texts = async (res: Response): Promise<string> => ((await res.json()) as { text?: string; blocks?: { text: string }[] }[]).map((b) => b.text ?? b.blocks?.map((x) => x.text).join("\n")).join("\n");

describe("seats on the ORS wire", () => {
  it("plays kuhn-poker's p1 against nash: the prompt, the messages and each call are p1's view, the reward p1's", async () => {
    const a = app();
    const sid = await newSid(a);
    expect((await create(a, sid, { env_name: "kuhn-poker", task_spec: { split: "train", index: 3 } })).status).toBe(200);
    const prompt = await texts(await a.raw("GET", "/kuhn-poker/prompt", undefined, { "x-session-id": sid }));
    expect(prompt).toMatch(/You are player 1/);
    expect(prompt).not.toMatch(/You are player 2|Your opponent acts first/);
    const mine = /Your card is the (\w+)/.exec(prompt)?.[1];
    const messages = await (await a.raw("GET", "/kuhn-poker/messages", undefined, { "x-session-id": sid })).json();
    expect(messages.map((m: { role: string }) => m.role)).toEqual(["system", "user"]);
    const tools = await a.raw("GET", "/kuhn-poker/task_tools", undefined, { "x-session-id": sid });
    expect(tools.status).toBe(200);

    const { result } = await respond(a, "kuhn-poker", sid, "<action>bet</action>");
    expect(result.ok).toBe(true);
    expect(result.output).toMatchObject({ finished: true, metadata: { seat: "p1", to_play: null } });
    expect(result.output.reward).toBe(result.output.metadata.score.seats.p1.reward);
    const p2 = await a.call("GET", `/v1/episodes/${sid}?seat=p2`);
    const theirs = /Your card is the (\w+)/.exec(JSON.stringify(p2.json.messages))?.[1];
    expect(theirs).not.toBe(mine);
    if (/folded/.test(JSON.stringify(result.output.blocks))) expect(JSON.stringify(result)).not.toContain(`the ${theirs}`);

    // Group scoring scores a candidate as the session's seat; a rubric that reads the hand's state says so per component, as /v1/envs/{id}/score does.
    const group = await events(await a.raw("POST", "/kuhn-poker/score_group", { candidates: [{ messages: [{ role: "assistant", blocks: [{ type: "text", text: "<action>bet</action>" }] }] }] }, { "x-session-id": sid }));
    const scored = JSON.parse(group.find(([e]) => e === "end")?.[1] ?? "{}");
    expect(scored.scores[0].metadata.score.components.find((c: { name: string }) => c.name === "format")).toMatchObject({ score: 1 });
  });

  it("plays the seat task_spec.seats leaves to the client: p2 opens with nash's move and its own card only", async () => {
    const a = app();
    const sid = await newSid(a);
    const made = await create(a, sid, { env_name: "kuhn-poker", task_spec: { split: "train", index: 4, seats: { p1: "nash", p2: "client" } } });
    expect(made.status, await made.clone().text()).toBe(200);
    // A retried create with the same task finds the same episode; another assignment is another task.
    expect((await create(a, sid, { env_name: "kuhn-poker", task_spec: { split: "train", index: 4, seats: { p1: "nash", p2: "client" } } })).status).toBe(200);
    expect((await create(a, sid, { env_name: "kuhn-poker", task_spec: { split: "train", index: 4 } })).status).toBe(400);
    const prompt = await texts(await a.raw("GET", "/kuhn-poker/prompt", undefined, { "x-session-id": sid }));
    expect(prompt).toMatch(/You are player 2/);
    expect(prompt).toMatch(/Your opponent (checked|bet 1 chip)/);
    // nash's seat's view (its card) waits for the end of the hand; the prompt holds one card, p2's own.
    expect((await a.call("GET", `/v1/episodes/${sid}?seat=p1`)).status).toBe(409);
    expect(prompt.match(/Your card is/g)).toHaveLength(1);
    const answer = /bet 1 chip/.test(prompt) ? "fold" : "check";
    const { result } = await respond(a, "kuhn-poker", sid, `<action>${answer}</action>`);
    expect(result.output.metadata).toMatchObject({ seat: "p2" });
    expect(result.output.reward === null || result.output.reward === result.output.metadata.score.seats.p2.reward).toBe(true);
  });

  it("refuses an episode with more than one client seat before it starts (client_seats_unsupported), and a /v1 self-play episode as a session", async () => {
    const a = app();
    const sid = await newSid(a);
    const selfPlay = await create(a, sid, { env_name: "tic-tac-toe-2p", task_spec: { split: "train", index: 0 } });
    expect(selfPlay.status).toBe(422);
    expect(await selfPlay.json()).toMatchObject({ code: "client_seats_unsupported", details: { client_seats: ["x", "o"] } });
    expect((await create(a, sid, { env_name: "tic-tac-toe-2p", task_spec: { split: "train", index: 0, seats: { z: "minimax" } } })).status).toBe(422);
    // Nothing was made under the session id: it still starts a valid task.
    const ok = await create(a, sid, { env_name: "tic-tac-toe-2p", task_spec: { split: "train", index: 0, seats: { o: "minimax" } } });
    expect(ok.status, await ok.clone().text()).toBe(200);
    const { result } = await respond(a, "tic-tac-toe-2p", sid, "<move>5</move>");
    expect(result.output.metadata).toMatchObject({ seat: "x", to_play: "x" });
    expect(result.output.blocks.at(-1).text).toMatch(/O played \d/);

    const native = await a.call("POST", "/v1/envs/tic-tac-toe-2p/episodes", { seed: 1 });
    const refused = await a.raw("GET", "/tic-tac-toe-2p/prompt", undefined, { "x-session-id": native.json.episode_id });
    expect(refused.status).toBe(422);
    expect((await refused.json()).code).toBe("client_seats_unsupported");
    const played = await a.raw("POST", "/tic-tac-toe-2p/call", { name: "respond", input: { content: "<move>5</move>" } }, { "x-session-id": native.json.episode_id });
    expect(played.status).toBe(422);
    expect((await played.json()).code).toBe("client_seats_unsupported");
    expect((await a.call("GET", `/v1/episodes/${native.json.episode_id}?seat=x`)).json.turn).toBe(0);
  });
});
