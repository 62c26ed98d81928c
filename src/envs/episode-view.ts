import { MAX_TASK_INDEX, type Example, type Split, type ToolDefinition } from "../protocol/index.js";
import { loadTask, openingMessages } from "./engine.js";
import type { AnyEnvironment } from "./types.js";

/**
 * What one episode offers the model: its tools and its turn limit. An environment group
 * (or an MCP tool environment) answers per episode, from the episode's state; every
 * caller (the HTTP server, the in-process eval driver, the engine's stop check) reads it
 * here, so the two ways of running an episode cannot disagree.
 */
export interface EpisodeView {
  tools: ToolDefinition[];
  max_turns: number;
}

/** The tools of the episode whose state is `state` (the environment's own when they do not depend on it). */
export function episodeTools(env: AnyEnvironment, state: unknown): ToolDefinition[] {
  return env.toolDefinitionsFor?.(state) ?? env.toolDefinitions();
}

/** The turn limit of the episode whose state is `state` (an env group's member's own limit). */
export function episodeMaxTurns(env: AnyEnvironment, state: unknown): number {
  return env.maxTurnsFor?.(state) ?? env.maxTurns;
}

export function episodeView(env: AnyEnvironment, state: unknown): EpisodeView {
  return { tools: episodeTools(env, state), max_turns: episodeMaxTurns(env, state) };
}

/**
 * The tasks `offset` .. `offset + limit - 1` of a split with the prompt as the model sees
 * it. Bounded by `limit` and by the split's last index, never by how far `offset` goes;
 * an offset past a finite split is a RangeError for the caller to report.
 */
export async function listExamples(env: AnyEnvironment, split: Split, offset: number, limit: number): Promise<{ examples: Example[]; total: number | null }> {
  const total = env.dataset.size(split);
  if (total !== null && offset > total) throw new RangeError(`offset ${offset} is past the ${total} rows of split "${split}"`);
  const end = Math.min(total ?? MAX_TASK_INDEX + 1, offset + limit);
  const examples: Example[] = [];
  for (let index = offset; index < end; index++) {
    const row = await loadTask(env, split, index);
    examples.push({ index, split, prompt: openingMessages(env, row), answer: row.answer ?? null, info: row.info ?? {} });
  }
  return { examples, total };
}
