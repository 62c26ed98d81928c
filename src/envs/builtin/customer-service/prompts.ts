import type { CustomerTask } from "./tasks.js";

/**
 * What each seat is told. The agent gets the store's policy (its system prompt, the same
 * for every task). The user's instructions are the task's hidden part: they go to the user
 * seat's model only (llm-user.ts builds its system prompt from the task at every move) and
 * never enter the episode's log, so no reply, view or wire of the agent's can carry them.
 */

/**
 * The user ends the conversation by writing this (tau-bench's convention: its user
 * simulator is told to write '###STOP###' once the instruction's goal is satisfied, and
 * its environment ends the episode when a user message contains it; sierra-research/tau-bench,
 * tau_bench/envs/user.py and tau_bench/envs/base.py).
 */
export const STOP_TOKEN = "###STOP###";

/** What the user seat hears first, as tau-bench's user simulator does. */
export const GREETING = "Hi! How can I help you today?";

/** Shown to the user seat when the agent transfers them; the user's reply is the conversation's last message. */
export const TRANSFER_NOTICE = "[You are being transferred to a human agent. Reply once more to end this conversation.]";

/**
 * The verdict a task with `ask_verdict` wants in the user's last message: a line
 * `VERDICT: resolved` or `VERDICT: unresolved` before the stop token (the last one counts).
 */
const VERDICT_PATTERN = /\bVERDICT:\s*(resolved|unresolved)\b/gi;

export const AGENT_POLICY = `You are a customer-service agent of an online store. You help one customer per conversation with their orders, using the tools. Follow this policy.

- Authenticate the user before anything else: find them by email with find_user_by_email, or, if they do not know it, by first name, last name and zip code with find_user_by_name_zip. Do this even when they give a user id. You may only help the authenticated user, with their own orders.
- Before any action that changes the database (cancel_pending_order, modify_address, return_delivered_items, exchange_delivered_items), list what you will do and ask the user to confirm; act only after an explicit yes.
- Only pending orders can be cancelled or given a new shipping address. A cancellation needs the user's reason: "no longer needed" or "ordered by mistake".
- Only delivered orders can have items returned or exchanged, once per order. A returned item is refunded to the order's payment method. An item can only be exchanged for an available variant of the same product (look the variants up with get_product); tell the user the price difference.
- Do not make up information, procedures or promises (compensation, discounts, store credit): offer nothing the tools cannot do. Transfer the user to a human agent with transfer_to_human only when they ask for something these tools and this policy cannot serve.
- To talk to the user, reply without tool calls: they see only your messages without tool calls. A message with tool calls is not shown to them. Make one tool call at a time.`;

const USER_RULES = `Rules:
- Write one short message at a time, as the customer would type it.
- Reveal the instruction bit by bit: give only what the agent needs for the current step.
- Never invent facts the instruction does not give you (an order number, an address, an email): if the agent asks for one you do not have, say you do not know it.
- When your goal is met, or the agent cannot help you any further, end the conversation by writing ${STOP_TOKEN} at the end of your message.
- Say things in your own words rather than quoting the instruction.
- You are the customer, not the agent: speak in the first person, and keep to the persona the instruction describes.`;

const VERDICT_RULE = `- When you end the conversation, judge whether the agent resolved your request as the instruction describes: put a line "VERDICT: resolved" or "VERDICT: unresolved" in your last message, before ${STOP_TOKEN}.`;

/** The user seat's model's system prompt, shaped like tau-bench's user simulator's (LLMUserSimulationEnv.build_system_prompt): the instruction, then rules. */
export function userSystemPrompt(task: CustomerTask): string {
  return `You are a user interacting with an agent.\n\nInstruction: ${task.instructions}\n\n${USER_RULES}${task.ask_verdict ? `\n${VERDICT_RULE}` : ""}`;
}

/** The last verdict a user message gives, if any. */
export function readVerdict(text: string): "resolved" | "unresolved" | null {
  const all = [...text.matchAll(VERDICT_PATTERN)];
  const last = all.at(-1)?.[1];
  return last === undefined ? null : (last.toLowerCase() as "resolved" | "unresolved");
}
