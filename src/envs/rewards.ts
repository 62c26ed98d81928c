import type { ChatMessage } from "../protocol/index.js";
import type { RewardSpec } from "./rubric.js";

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
