import { AssistantMessage, type ChatMessage, type ToolDefinition } from "../protocol/index.js";
import { ticTacToeExpertMove } from "../envs/builtin/tic-tac-toe/expert.js";
import { EvalError } from "./errors.js";
import type { ChatModel, ChatRequest, ChatResult } from "./model.js";

/**
 * A policy that is not a model: given the transcript so far and the environment's tools,
 * the next assistant message (or just its text). Expert players, scripted agents, solvers.
 */
export interface Policy {
  act(messages: readonly ChatMessage[], tools: readonly ToolDefinition[]): unknown;
}

/** Longest reply text a policy module may return: the same order as a model turn's, and bounded. */
export const MAX_POLICY_REPLY_CHARS = 100_000;

/** Environments with a built-in expert policy (`--expert builtin`). */
export const builtinExperts: Readonly<Record<string, Policy>> = {
  "tic-tac-toe": { act: (messages) => ticTacToeExpertMove(messages) },
  // Each seat's own conversation names its mark and shows the board after the other's move, as the one-seat game does.
  "tic-tac-toe-2p": { act: (messages) => ticTacToeExpertMove(messages) },
};

/**
 * What a policy returned, checked as hostile input: a string becomes the assistant's text;
 * an object must be a valid assistant message (the protocol's own schema). Anything else,
 * or an over-long text, fails the rollout with a clear error instead of reaching the
 * environment.
 */
export function policyReply(raw: unknown): AssistantMessage {
  const value = typeof raw === "string" ? { role: "assistant", content: raw } : raw;
  const parsed = AssistantMessage.safeParse(value);
  if (!parsed.success) {
    const why = parsed.error.issues.map((i) => `${i.path.join(".") || "message"}: ${i.message}`).join("; ");
    throw new EvalError("model_bad_response", `policy returned no valid assistant message (${why})`, false);
  }
  const text = typeof parsed.data.content === "string" ? parsed.data.content : JSON.stringify(parsed.data.content ?? "");
  if (text.length > MAX_POLICY_REPLY_CHARS) throw new EvalError("model_bad_response", `policy reply is ${text.length} characters; at most ${MAX_POLICY_REPLY_CHARS}`, false);
  return parsed.data;
}

/**
 * A policy behind the chat-model interface, so the evaluator's rollout code (retries,
 * timing, scoring) drives it unchanged. Errors a policy throws are not retried: a
 * deterministic policy would throw again.
 */
export class PolicyModel implements ChatModel {
  readonly baseUrl = "policy:";

  constructor(
    readonly model: string,
    private readonly policy: Policy,
  ) {}

  async complete(request: ChatRequest, signal: AbortSignal): Promise<ChatResult> {
    signal.throwIfAborted();
    let raw: unknown;
    try {
      raw = await this.policy.act(request.messages, request.tools);
    } catch (err) {
      if (err instanceof EvalError) throw err;
      throw new EvalError("model_bad_response", `policy ${this.model} failed: ${err instanceof Error ? err.message : String(err)}`, false);
    }
    const message = policyReply(raw);
    return { message, finishReason: message.tool_calls?.length ? "tool_calls" : "stop", usage: null };
  }
}
