import { MAX_TASK_INDEX, Split, type Split as SplitName } from "../../protocol/index.js";
import type { OrsSplit, OrsTaskSpec } from "../../protocol/ors.js";
import type { AnyEnvironment } from "../../envs/index.js";
import { ApiError } from "../errors.js";

/*
 * Splits and tasks of an environment as ORS lists them. A task is named by (split, index),
 * edgegym's own address of a task; a procedural split has a task at every index up to
 * 2^32 − 1, so it can be counted and paged but not listed whole.
 */

/** Most task specs one answer holds (/tasks, /task_range): a page, never a whole procedural split. */
export const MAX_TASKS_PER_ANSWER = 10_000;

/** How many tasks a procedural split has: one per index 0 … 2^32 − 1. */
const PROCEDURAL_SIZE = MAX_TASK_INDEX + 1;

/** The splits with tasks in them: `train` as ORS's train, `eval` as its validation. */
export function orsSplits(env: AnyEnvironment): OrsSplit[] {
  const out: OrsSplit[] = [];
  if (env.dataset.size("train") !== 0) out.push({ name: "train", type: "train" });
  if (env.dataset.size("eval") !== 0) out.push({ name: "eval", type: "validation" });
  return out;
}

/** A split the environment has, else 400 with the reference server's words ("Invalid split"). */
export function checkSplit(env: AnyEnvironment, name: string): SplitName {
  const parsed = Split.safeParse(name);
  if (!parsed.success || env.dataset.size(parsed.data) === 0) {
    throw new ApiError("invalid_request", `Invalid split: ${JSON.stringify(name.slice(0, 64))}; this environment has ${orsSplits(env).map((s) => s.name).join(" and ") || "no tasks"}`);
  }
  return parsed.data;
}

/** Tasks in the split (2^32 for a procedural one). */
export function taskCount(env: AnyEnvironment, split: SplitName): number {
  return env.dataset.size(split) ?? PROCEDURAL_SIZE;
}

/** The task at `index`, else 400 "Invalid index" (ORS answers an IndexError so; a negative index is refused too). */
export function taskAt(env: AnyEnvironment, split: SplitName, index: number): OrsTaskSpec {
  const count = taskCount(env, split);
  if (!Number.isSafeInteger(index) || index < 0 || index >= count) {
    throw new ApiError("invalid_request", `Invalid index: ${index} is outside split "${split}" (0 to ${count - 1})`);
  }
  return { split, index };
}

/** Python's slice bounds over `count` items (negative counts from the end, clamped to 0 … count). */
function sliceBound(value: number | null | undefined, count: number, fallback: number): number {
  if (value === null || value === undefined) return fallback;
  return value < 0 ? Math.max(0, count + value) : Math.min(value, count);
}

/** Tasks `start` … `stop − 1` as Python slices them, at most {@link MAX_TASKS_PER_ANSWER}. */
export function taskRange(env: AnyEnvironment, split: SplitName, start: number | null | undefined, stop: number | null | undefined): OrsTaskSpec[] {
  const count = taskCount(env, split);
  const from = sliceBound(start, count, 0);
  const to = sliceBound(stop, count, count);
  if (to - from > MAX_TASKS_PER_ANSWER) {
    throw new ApiError("invalid_request", `Invalid index range: ${to - from} tasks asked for; at most ${MAX_TASKS_PER_ANSWER} per call, so page with start and stop`);
  }
  const out: OrsTaskSpec[] = [];
  for (let index = from; index < to; index++) out.push({ split, index });
  return out;
}

/** Every task of a finite split; a procedural or very large one is 400, as ORS answers an environment without list_tasks. */
export function allTasks(env: AnyEnvironment, split: SplitName): OrsTaskSpec[] {
  const size = env.dataset.size(split);
  if (size === null || size > MAX_TASKS_PER_ANSWER) {
    throw new ApiError(
      "invalid_request",
      `list_tasks is not supported for this split (${size === null ? "procedural: a task at every index up to 2^32 - 1" : `${size} tasks`}). Use the index-based API (num_tasks + get_task, or get_task_range) instead.`,
    );
  }
  return taskRange(env, split, 0, size);
}
