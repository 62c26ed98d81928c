import type { RewardSpec } from "./rubric.js";

/**
 * The format reward of the environment's own parser as a rubric entry, so every
 * environment writes it the same way.
 *
 * @example defineRubric([correct, formatReward({ weight: 0.2 })])
 */
export function formatReward<State>(opts: { weight?: number; name?: string } = {}): RewardSpec<State> {
  return {
    name: opts.name ?? "format",
    weight: opts.weight ?? 0.2,
    description: "How well the completion follows the parser's format (its formatReward), in [0, 1].",
    fn: ({ completion, parser }) => parser.formatReward(completion),
  };
}
