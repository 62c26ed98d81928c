import { contentText, type ChatMessage } from "../../../protocol/index.js";
import type { SeatPolicy } from "../../seats.js";
import { GREETING, STOP_TOKEN, TRANSFER_NOTICE } from "./prompts.js";
import type { CustomerServiceState, Verdict } from "./state.js";
import { taskById, type CustomerTask } from "./tasks.js";

/**
 * A deterministic customer, played from the task's script (tasks.json): its opening line,
 * then for each agent message the first rule whose phrase the message contains. It ends
 * the conversation (closing words, the verdict where the task asks for one, `###STOP###`):
 * - after a transfer to a human;
 * - once the agent has made as many writes as the task expects (one at least), when it
 *   reads the agent's next words: the user has got what they came for, or something else;
 * - when the agent says one of `stop_when` (a refusal the user accepts);
 * - when no rule matches and it has already said its fallback line `MAX_FALLBACKS` times
 *   (it gives up, unresolved).
 * Good enough to tell an agent that follows the policy from one that does not; the LLM
 * user (llm-user.ts) is the one to train against.
 */

export const FALLBACK = "Sorry, I'm not sure what you need from me. Can you help me with my request?";
export const GIVE_UP = "I don't think we're getting anywhere. Goodbye.";
/** Fallback lines the scripted user says before it gives up. */
export const MAX_FALLBACKS = 2;

const lower = (s: string) => s.toLowerCase();
/** tau-bench compares outputs lower-cased with commas removed ("1,000" is "1000"). */
const loose = (s: string) => lower(s).replaceAll(",", "");

/** Everything the agent told the user (the user seat's incoming messages, without the environment's own lines). */
function agentWords(view: readonly ChatMessage[]): string[] {
  return view.filter((m) => m.role === "user").map((m) => contentText(m.content)).filter((t) => t !== GREETING && t !== TRANSFER_NOTICE);
}

/** Whether the user is satisfied, by the task's verdict rule. */
export function scriptedVerdict(task: CustomerTask, state: CustomerServiceState, view: readonly ChatMessage[]): Verdict {
  const rule = task.script.verdict ?? {};
  const told = loose(agentWords(view).join("\n"));
  const said = (rule.said ?? []).every((phrase) => told.includes(loose(phrase)));
  const transferred = rule.transferred === undefined || rule.transferred === state.transferred;
  return said && transferred ? "resolved" : "unresolved";
}

function finish(task: CustomerTask, words: string, verdict: Verdict | null): string {
  return [words, ...(task.ask_verdict && verdict ? [`VERDICT: ${verdict}`] : []), STOP_TOKEN].join("\n");
}

/** The scripted user's next line, given the state and its own conversation so far. */
export function scriptedReply(task: CustomerTask, state: CustomerServiceState, view: readonly ChatMessage[]): string {
  const script = task.script;
  const own = view.filter((m) => m.role === "assistant").map((m) => contentText(m.content));
  if (own.length === 0) return script.opening;
  const done = () => finish(task, script.closing, scriptedVerdict(task, state, view));
  if (state.transferred) return done();
  if (state.writes >= Math.max(1, task.actions.length)) return done();
  const heard = lower(agentWords(view).at(-1) ?? "");
  if (script.stop_when?.some((phrase) => heard.includes(lower(phrase)))) return done();
  for (const rule of script.replies) {
    if (rule.writes !== undefined && rule.writes !== state.writes) continue;
    if (rule.when.some((phrase) => heard.includes(lower(phrase)))) return rule.say;
  }
  if (own.filter((line) => line === FALLBACK).length >= MAX_FALLBACKS) return finish(task, GIVE_UP, "unresolved");
  return FALLBACK;
}

export const scriptedUser: SeatPolicy<CustomerServiceState, unknown> = {
  description: "A deterministic customer that follows the task's script (for tests and cheap baselines).",
  act: (state, ctx) => ({ role: "assistant", content: scriptedReply(taskById(state.task_id), state, ctx.view) }),
};
