import type OpenAI from "openai";
import { contentText, type ChatMessage } from "../../../protocol/index.js";
import { EngineError } from "../../engine.js";
import { classifyJudgeError, consoleJudgeLogger, failureRef, JudgeFailure, type JudgeFailureLogger } from "../../judge-failure.js";
import type { JudgeCatalog } from "../../judges.js";
import type { JudgeEndpoint } from "../../judge-rubric.js";
import { importOpenAI } from "../../openai-module.js";
import type { SeatPolicy } from "../../seats.js";
import { userModelEndpoint, type CustomerServiceArgs } from "./args.js";
import { userSystemPrompt } from "./prompts.js";
import type { CustomerServiceState } from "./state.js";
import { taskById, type CustomerTask } from "./tasks.js";

/**
 * The user seat played by an LLM the operator configured (a judge of the catalog, chosen
 * by `args.user_model`). Each move sends the user's hidden instructions as the system
 * prompt and the user seat's own conversation as the history (the agent's words as user
 * messages, the user's own as assistant messages, as tau-bench's user simulator sees
 * them), and returns the reply as the user's message.
 *
 * A failure (no connection, a timeout, an HTTP error, an empty reply) throws a
 * UserModelFailure: the engine ends the episode with `env_error`, which a trainer masks
 * rather than learning a reward of 0 from. The error names a code and a reference; the URL
 * and the upstream's text go to the server log only, as a judge's do (judge-failure.ts).
 */

export interface LlmUserOptions {
  /** Per request. Default 60 000. */
  timeoutMs?: number;
  /** Retries of a failed request (connection errors, 408/409/429/5xx), by the openai client. Default 1. */
  maxRetries?: number;
  /** Receives each failure in full. Default: one `console.error` line. */
  log?: JudgeFailureLogger;
}

/** The most of a reply passed on to the agent: a runaway model cannot flood its context. */
export const MAX_USER_MESSAGE_CHARS = 4_000;

/**
 * The user model failed; its message is safe to show a client. At a step the engine ends
 * the episode with `env_error` and this text. At reset (the user speaks first) there is no
 * episode yet: the request fails with 503 `service_unavailable` and Retry-After, as for
 * any upstream the server depends on, instead of a 500.
 */
export class UserModelFailure extends EngineError {
  constructor(failure: JudgeFailure) {
    super("service_unavailable", `the simulated user's model failed: ${failure.clientText}`, { retry_after_seconds: 5, code: failure.code });
    this.name = "UserModelFailure";
  }
}

/** What the user's model is sent: its instructions, then its own side of the conversation. */
export function userModelMessages(task: CustomerTask, view: readonly ChatMessage[]): { role: "system" | "user" | "assistant"; content: string }[] {
  const history = view.flatMap((m) => (m.role === "user" || m.role === "assistant" ? [{ role: m.role, content: contentText(m.content) }] : []));
  return [{ role: "system", content: userSystemPrompt(task) }, ...history];
}

/** A reasoning model's thinking is the user's private thoughts (they may quote the instructions): only what follows it is said. */
export function spokenPart(reply: string): string {
  let text = reply.replace(/<think>[\s\S]*?<\/think>/g, "");
  const close = text.lastIndexOf("</think>");
  if (close >= 0) text = text.slice(close + "</think>".length);
  const open = text.indexOf("<think>");
  if (open >= 0) text = text.slice(0, open);
  return text.trim();
}

export function llmUser(catalog: JudgeCatalog, options: LlmUserOptions = {}): SeatPolicy<CustomerServiceState, unknown> {
  const clients = new Map<string, OpenAI>();
  const log = options.log ?? consoleJudgeLogger;
  const timeoutMs = options.timeoutMs ?? 60_000;

  const clientFor = (Client: typeof OpenAI, endpoint: JudgeEndpoint): OpenAI => {
    const key = `${endpoint.baseURL}\n${endpoint.apiKey ?? ""}`;
    let client = clients.get(key);
    if (!client) {
      client = new Client({ baseURL: endpoint.baseURL, apiKey: endpoint.apiKey || "no-key", timeout: timeoutMs, maxRetries: options.maxRetries ?? 1 });
      clients.set(key, client);
    }
    return client;
  };

  const fail = (endpoint: JudgeEndpoint & { name: string }, code: JudgeFailure["code"], detail: string, status?: number): UserModelFailure => {
    const ref = failureRef();
    log({ ref, code, judge: endpoint.name, model: endpoint.model, baseURL: endpoint.baseURL, detail });
    return new UserModelFailure(new JudgeFailure(code, ref, endpoint.name, status));
  };

  return {
    description: "A customer played by an LLM the operator configured (args.user_model names one of the server's judges), given the task's hidden instructions.",
    async act(state, ctx) {
      const args = ctx.args as CustomerServiceArgs | undefined;
      const endpoint = userModelEndpoint(catalog, args);
      const messages = userModelMessages(taskById(state.task_id), ctx.view);
      let reply: string;
      try {
        const { default: Client } = await importOpenAI();
        const completion = await clientFor(Client, endpoint).chat.completions.create(
          {
            model: endpoint.model,
            messages,
            temperature: args?.user_model?.temperature ?? 0,
            ...(args?.user_model?.max_tokens ? { max_tokens: args.user_model.max_tokens } : {}),
          },
          ctx.signal ? { signal: ctx.signal } : {},
        );
        reply = completion.choices[0]?.message.content ?? "";
      } catch (err) {
        if (ctx.signal?.aborted) throw err;
        const { code, status, detail } = classifyJudgeError(err);
        throw Object.assign(fail(endpoint, code, detail, status), { cause: err });
      }
      const spoken = spokenPart(reply);
      if (!spoken) throw fail(endpoint, "judge_error", `empty user message; reply: ${JSON.stringify(reply.slice(0, 500))}`);
      return { role: "assistant", content: spoken.slice(0, MAX_USER_MESSAGE_CHARS) };
    },
  };
}
