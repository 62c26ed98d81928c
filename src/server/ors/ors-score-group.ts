import type { ChatMessage, Episode } from "../../protocol/index.js";
import type { OrsGroupCandidate, OrsMessage, OrsScoreGroupOutput } from "../../protocol/ors.js";
import { loadTask, parseArgs, scoreCompletionGroup, type AnyEnvironment, type CompletionItem } from "../../envs/index.js";

/**
 * Whether an environment's rubric can score a transcript it is handed: not when its episodes
 * own something outside the database (a container), which a candidate does not carry.
 */
export function scoresGroups(env: AnyEnvironment): boolean {
  return env.episodeResources === undefined;
}

/** An ORS message as an OpenAI chat message: one text block is the content, several are its text parts (as the client converts them). */
function chatMessage(message: OrsMessage): ChatMessage {
  const content = message.blocks.length === 1 ? (message.blocks[0]?.text ?? "") : message.blocks.map((b) => ({ type: "text" as const, text: b.text }));
  return { role: message.role, content } as ChatMessage;
}

/**
 * What a candidate answered: its messages from the first assistant turn on. What comes before
 * is the prompt, which is the session's own (a candidate may repeat it or leave it out).
 */
function completionOf(candidate: OrsGroupCandidate): ChatMessage[] {
  const first = candidate.messages.findIndex((m) => m.role === "assistant");
  return first < 0 ? [] : candidate.messages.slice(first).map(chatMessage);
}

/**
 * POST /{env}/score_group: each candidate scored as an answer to the session's task (its
 * opening messages, reference answer and info, under the episode's args), all in one group,
 * so the rubric's group rewards see every candidate, as `POST /v1/envs/{id}/score` scores
 * items sharing a group. Stateless: the session takes no step and nothing is stored, so a
 * candidate scores what the same answer would have scored as the session's own call (an
 * environment whose rubric reads state beyond the transcript scores it as stateless scoring does).
 * `head` is the session's episode read from turn 0 (its messages are the opening ones; a
 * seated episode's, those of the seat the session plays, named in `seat`).
 */
export async function scoreCandidates(env: AnyEnvironment, head: Episode, candidates: readonly OrsGroupCandidate[]): Promise<OrsScoreGroupOutput> {
  if (candidates.length === 0) return { scores: [] };
  const task = await loadTask(env, head.split, head.index, parseArgs(env, head.args));
  const items: CompletionItem[] = candidates.map((candidate) => ({
    prompt: head.messages,
    completion: completionOf(candidate),
    answer: task.answer ?? undefined,
    info: task.info ?? {},
    // A seated session's candidates are its seat's conversations, scored as that seat's.
    ...(head.seat === undefined ? {} : { seat: head.seat }),
  }));
  const scores = await scoreCompletionGroup(env, items, head.args);
  return { scores: scores.map((score, i) => ({ reward: score.reward, metadata: { score, candidate: candidates[i]?.metadata ?? null } })) };
}
