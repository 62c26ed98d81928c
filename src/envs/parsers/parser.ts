import type { ChatMessage } from "../../protocol/index.js";

/**
 * Reads what the environment needs out of the model's text. Each parser also offers a
 * format reward: how well the completion follows the format it expects.
 */
export interface Parser {
  /** Human-readable format, published in the environment's info. */
  readonly format: string | null;
  /** The final answer in a completion, or null when there is none. */
  parseAnswer(completion: string | readonly ChatMessage[]): string | null;
  /** A score in [0, 1] for following the format across the assistant messages. */
  formatReward(completion: string | readonly ChatMessage[]): number;
}
