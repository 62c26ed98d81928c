import { contentText, type ChatMessage } from "../protocol/index.js";
import type { RewardSpec, Rubric } from "./rubric.js";

function lastAssistant(completion: readonly ChatMessage[]): ChatMessage[] {
  for (let i = completion.length - 1; i >= 0; i--) if (completion[i]?.role === "assistant") return [completion[i] as ChatMessage];
  return [];
}

/**
 * The format reward of the environment's own parser as a rubric entry, so every
 * environment writes it the same way. `finalOnly` scores the last assistant message
 * alone: in a tool environment the earlier messages are tool calls, not answers.
 *
 * @example defineRubric([correct, formatReward({ weight: 0.2 })])
 */
export function formatReward<State>(opts: { weight?: number; name?: string; finalOnly?: boolean } = {}): RewardSpec<State> {
  return {
    name: opts.name ?? "format",
    weight: opts.weight ?? 0.2,
    description: opts.finalOnly
      ? "How well the final message follows the parser's format (its formatReward), in [0, 1]."
      : "How well the completion follows the parser's format (its formatReward), in [0, 1].",
    fn: ({ completion, parser }) => parser.formatReward(opts.finalOnly ? lastAssistant(completion) : completion),
  };
}

/**
 * Metrics of tool use, to combine into a tool environment's rubric: calls per tool
 * (`tool_calls/<name>`) and failed calls (`tool_errors`: results the server wrote as
 * `Error: …`, e.g. unknown tool, bad arguments, a throw or a timeout).
 *
 * @example rubric: combineRubrics(defineRubric([correct]), toolUsageRubric())
 */
export function toolUsageRubric<State>(): Rubric<State> {
  return {
    rewards: [],
    metrics: ({ completion }) => {
      const out: Record<string, number> = { tool_errors: 0 };
      for (const m of completion) {
        if (m.role === "assistant") for (const call of m.tool_calls ?? []) out[`tool_calls/${call.function.name}`] = (out[`tool_calls/${call.function.name}`] ?? 0) + 1;
        if (m.role === "tool" && contentText(m.content).startsWith("Error: ")) out.tool_errors = (out.tool_errors ?? 0) + 1;
      }
      return out;
    },
  };
}
