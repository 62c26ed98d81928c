import { contentText, type ChatMessage } from "../../protocol/index.js";

/** The text of each assistant message in a completion (a plain string is one message). */
export function assistantTexts(completion: string | readonly ChatMessage[]): string[] {
  if (typeof completion === "string") return [completion];
  return completion.filter((m) => m.role === "assistant").map((m) => contentText(m.content));
}
