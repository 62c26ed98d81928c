import type { StopCondition } from "./types.js";

/** The episode has used its turns. Truncates unless the environment is single-turn. */
export function maxTurnsReached<State>(opts: { truncates: boolean; name?: string }): StopCondition<State> {
  return { name: opts.name ?? "max_turns", truncates: opts.truncates, check: ({ turn, maxTurns }) => turn >= maxTurns };
}

/** In a tool environment, a message without tool calls is the final answer. */
export function noToolCalls<State>(): StopCondition<State> {
  return { name: "no_tool_calls", truncates: false, check: ({ message }) => !message.tool_calls || message.tool_calls.length === 0 };
}
