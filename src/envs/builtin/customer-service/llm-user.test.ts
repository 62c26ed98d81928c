import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { call, ORACLE, say } from "../../../../test/support/customer-service-oracle.js";
import { contentText, type AssistantMessage } from "../../../protocol/index.js";
import { EngineError, scoreEpisode, startEpisode, stepEpisode, type EpisodeSnapshot } from "../../engine.js";
import type { JudgeCatalog } from "../../judges.js";
import type { JudgeFailureLog } from "../../judge-failure.js";
import { seatView } from "../../seats.js";
import { createCustomerService, customerService } from "./index.js";
import { spokenPart } from "./llm-user.js";
import { GREETING, STOP_TOKEN, userSystemPrompt } from "./prompts.js";
import { taskById } from "./tasks.js";

/**
 * The `llm` user against a tiny OpenAI-compatible server on 127.0.0.1 whose "model" answers
 * canned user lines: real HTTP through the real openai client, so the test sees exactly
 * what the user's model is sent.
 */

interface CannedAnswer {
  content?: string;
  status?: number;
  /** Never answer (the connection stays open until the server closes). */
  hang?: boolean;
}

interface UserModelServer {
  baseURL: string;
  requests: { body: { model: string; messages: { role: string; content: string }[]; temperature?: number }; headers: IncomingHttpHeaders }[];
  close(): Promise<void>;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function startUserModel(answers: CannedAnswer[]): Promise<UserModelServer> {
  const requests: UserModelServer["requests"] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as UserModelServer["requests"][number]["body"];
    requests.push({ body, headers: req.headers });
    const answer = answers[requests.length - 1] ?? { status: 500 };
    if (answer.hang) return;
    if (answer.status) {
      res.writeHead(answer.status, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "upstream detail that stays in the log", type: "server_error" } }));
      return;
    }
    const completion = { id: `c${requests.length}`, object: "chat.completion", created: 0, model: body.model, choices: [{ index: 0, message: { role: "assistant", content: answer.content }, finish_reason: "stop" }] };
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(completion));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

const catalogAt = (baseURL: string): JudgeCatalog => ({ judges: [{ name: "sim", baseURL, models: ["user-sim", "user-sim-large"], apiKey: "sk-user-secret" }], defaultJudge: "sim" });

function llmEnv(baseURL: string, logs: JudgeFailureLog[] = [], timeoutMs = 5_000) {
  return createCustomerService(catalogAt(baseURL), { userModel: { maxRetries: 0, timeoutMs, log: (event) => logs.push(event) } });
}

async function steps(env: ReturnType<typeof llmEnv>, snapshot: EpisodeSnapshot, moves: readonly AssistantMessage[]): Promise<EpisodeSnapshot> {
  let s = snapshot;
  for (const move of moves) {
    if (s.done) break;
    s = (await stepEpisode(env, s, move, { seat: "agent" })).snapshot;
  }
  return s;
}

const reset = (env: ReturnType<typeof llmEnv>, args: Record<string, unknown> = { user_model: { judge: "sim" } }) =>
  startEpisode(env, { split: "train", index: 0, seed: 3, seats: { user: "llm" }, args });

describe("the llm user", () => {
  it("is sent the task's hidden instructions as its system prompt and its own conversation as history", async () => {
    const task = taskById("cancel-by-mistake");
    const model = await startUserModel([
      { content: "Hi, I need to cancel an order I made by mistake." },
      { content: "<think>The instruction says my email is noah.kim@example.com and I must not say it all at once.</think>It's noah.kim@example.com." },
      { content: "Order #W2001." },
      { content: "Yes, go ahead." },
      { content: `Thanks, that's all! ${STOP_TOKEN}` },
    ]);
    const env = llmEnv(model.baseURL);
    const start = await reset(env, { user_model: { judge: "sim", model: "user-sim-large", temperature: 0.3 } });
    expect(start.state).toMatchObject({ seats: { agent: "client", user: "llm" }, to_play: "agent" });
    expect(seatView(start.messages, "agent").at(-1)).toEqual({ role: "user", content: "Hi, I need to cancel an order I made by mistake." });

    const first = model.requests[0]!;
    expect(first.headers.authorization).toBe("Bearer sk-user-secret");
    expect(first.body).toMatchObject({ model: "user-sim-large", temperature: 0.3 });
    expect(first.body.messages).toEqual([
      { role: "system", content: userSystemPrompt(task) },
      { role: "user", content: GREETING },
    ]);
    expect(first.body.messages[0]!.content).toContain(task.instructions);
    expect(first.body.messages[0]!.content).toContain(STOP_TOKEN);

    const done = await steps(env, start, ORACLE["cancel-by-mistake"]!);
    expect([done.done, done.stopReason, done.error]).toEqual([true, "user_stop", null]);
    expect(model.requests).toHaveLength(5);
    // The second move sees the conversation so far, from the user's side: the agent's words as user messages.
    expect(model.requests[1]!.body.messages).toEqual([
      { role: "system", content: userSystemPrompt(task) },
      { role: "user", content: GREETING },
      { role: "assistant", content: "Hi, I need to cancel an order I made by mistake." },
      { role: "user", content: "I can help with that. Could you please give me your email address?" },
    ]);
    // Its thinking was not said: the next request carries only the spoken part, and the agent saw only that.
    expect(model.requests[2]!.body.messages.at(-2)).toEqual({ role: "assistant", content: "It's noah.kim@example.com." });
    const agentSaw = JSON.stringify(seatView(done.messages, "agent"));
    expect(agentSaw).not.toContain("<think>");
    expect(agentSaw).not.toContain(task.instructions);
    expect(JSON.stringify(done)).not.toContain(task.instructions);
    // Tool results stay with the agent.
    expect(model.requests.some((r) => JSON.stringify(r.body).includes("noah_kim_1001"))).toBe(false);

    const score = await scoreEpisode(env, done);
    expect(score.reward).toBe(1);
    expect(score.seats?.user?.reward).toBe(1);
  });

  it("defaults to the operator's default judge, its first model and temperature 0", async () => {
    const model = await startUserModel([{ content: "Hello there." }]);
    const s = await reset(llmEnv(model.baseURL), {});
    expect(s.done).toBe(false);
    expect(model.requests[0]!.body).toMatchObject({ model: "user-sim", temperature: 0 });
  });

  it("needs a model the operator configured", async () => {
    await expect(startEpisode(customerService, { split: "train", index: 0, seats: { user: "llm" } })).rejects.toMatchObject({
      code: "invalid_env_args",
      message: expect.stringMatching(/the llm user needs a model: no LLM judge is configured on this server/),
    });
    const model = await startUserModel([]);
    for (const user_model of [{ judge: "gpt" }, { judge: "sim", model: "gpt-5" }]) {
      await expect(reset(llmEnv(model.baseURL), { user_model })).rejects.toMatchObject({ code: "invalid_env_args", message: expect.stringMatching(/user_model\.(judge|model)/) });
    }
    await expect(reset(llmEnv(model.baseURL), { user_model: { url: "http://evil.example/v1" } })).rejects.toMatchObject({ code: "invalid_env_args" });
    expect(model.requests).toHaveLength(0);
    // The scripted user needs none.
    expect((await startEpisode(customerService, { split: "train", index: 0 })).done).toBe(false);
  });

  it("ends the episode with env_error when its model fails, the details in the log only", async () => {
    for (const [answer, code] of [
      [{ status: 500 }, /judge_http_error: judge "sim" answered HTTP 500/],
      [{ content: "<think>hmm</think>   " }, /judge_error: judge "sim" failed/],
      [{ hang: true }, /judge_timeout: judge "sim" did not reply in time/],
    ] as const) {
      const logs: JudgeFailureLog[] = [];
      const model = await startUserModel([{ content: "Hi, I need help with an order." }, answer]);
      const env = llmEnv(model.baseURL, logs, 400);
      const s = await steps(env, await reset(env), [say("Sure, what is your email?")]);
      expect([s.done, s.stopReason]).toEqual([true, "env_error"]);
      expect(s.error).toMatch(/^UserModelFailure: the simulated user's model failed: /);
      expect(s.error).toMatch(code);
      expect(s.error).not.toContain(model.baseURL);
      expect(s.error).not.toContain("upstream detail");
      expect(logs).toHaveLength(1);
      expect(logs[0]).toMatchObject({ judge: "sim", baseURL: model.baseURL });
      expect(s.error).toContain(logs[0]!.ref);
    }
  });

  it("fails a reset it cannot start with 503 service_unavailable, not a broken episode", async () => {
    const model = await startUserModel([]);
    await model.close();
    const logs: JudgeFailureLog[] = [];
    const err = await reset(llmEnv(model.baseURL, logs)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineError);
    expect(err).toMatchObject({ code: "service_unavailable", details: { code: "judge_unreachable", retry_after_seconds: 5 } });
    expect(logs[0]).toMatchObject({ code: "judge_unreachable" });
  });

  it("keeps only what follows a reasoning model's thinking", () => {
    expect(spokenPart("<think>secret plan</think> Hello!")).toBe("Hello!");
    expect(spokenPart("secret plan</think>Hello!")).toBe("Hello!");
    expect(spokenPart("Hello! <think>unfinished")).toBe("Hello!");
    expect(spokenPart("Plain line.")).toBe("Plain line.");
  });

  it("plays a whole task with the agent stepping through tool calls in between", async () => {
    const model = await startUserModel([{ content: "I want to cancel something." }, { content: `Never mind. ${STOP_TOKEN}` }]);
    const env = llmEnv(model.baseURL);
    const s = await steps(env, await reset(env), [call("get_product", { product_id: "P100" }), say("Which order?")]);
    expect([s.done, s.stopReason]).toEqual([true, "user_stop"]);
    // The tool call was not shown to the user: one request at reset, one after the agent's words.
    expect(model.requests).toHaveLength(2);
    expect(contentText(model.requests[1]!.body.messages.at(-1)!.content)).toBe("Which order?");
    expect((await scoreEpisode(env, s)).reward).toBe(0);
  });
});
