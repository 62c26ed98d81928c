import type { ChatMessage, Score, ScoreComponent } from "../protocol/index.js";
import type { Parser } from "./parsers/parser.js";
import type { TaskRow } from "./types.js";

/** Everything a reward function may read; each function takes only what it names. */
export interface RewardInputs<State> {
  prompt: readonly ChatMessage[];
  completion: readonly ChatMessage[];
  answer: string | null;
  info: Record<string, unknown>;
  /** Episode state; null when scoring completions statelessly. */
  state: State | null;
  parser: Parser;
  task: TaskRow;
}

export type RewardFn<State> = (inputs: RewardInputs<State>) => number | Promise<number>;

export interface RewardSpec<State> {
  name: string;
  /** 0 makes it a metric: reported, not rewarded. */
  weight: number;
  description?: string;
  fn: RewardFn<State>;
}

export interface Rubric<State> {
  rewards: RewardSpec<State>[];
  /** Figures reported beside the reward, e.g. turns or tool calls. */
  metrics?: (inputs: RewardInputs<State>) => Record<string, number>;
}

/**
 * @example
 * const rubric = defineRubric([
 *   { name: "correct", weight: 1, fn: ({ completion, answer, parser }) => Number(parser.parseAnswer(completion) === answer) },
 *   { name: "format", weight: 0.2, fn: ({ completion, parser }) => parser.formatReward(completion) },
 * ]);
 */
export function defineRubric<State>(rewards: RewardSpec<State>[], metrics?: Rubric<State>["metrics"]): Rubric<State> {
  const names = new Set<string>();
  for (const r of rewards) {
    if (names.has(r.name)) throw new Error(`rubric has two rewards named "${r.name}"`);
    if (!Number.isFinite(r.weight)) throw new Error(`reward "${r.name}" has a non-finite weight`);
    names.add(r.name);
  }
  return metrics ? { rewards, metrics } : { rewards };
}

function errorText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

/**
 * Runs every reward function. One that throws or returns a non-number scores 0 and its
 * error is reported on its component, so one broken function never sinks the rollout.
 */
export async function scoreRubric<State>(rubric: Rubric<State>, inputs: RewardInputs<State>): Promise<Score> {
  const components: ScoreComponent[] = await Promise.all(
    rubric.rewards.map(async ({ name, weight, fn }): Promise<ScoreComponent> => {
      try {
        const value = await fn(inputs);
        if (typeof value !== "number" || !Number.isFinite(value)) {
          return { name, weight, score: 0, error: `returned ${String(value)}, not a finite number` };
        }
        return { name, weight, score: value };
      } catch (err) {
        return { name, weight, score: 0, error: errorText(err) };
      }
    }),
  );
  const reward = components.reduce((sum, c) => sum + c.weight * c.score, 0);
  const metrics: Record<string, number> = {};
  for (const c of components) if (c.weight === 0) metrics[c.name] = c.score;
  if (rubric.metrics) {
    try {
      Object.assign(metrics, rubric.metrics(inputs));
    } catch {
      // Metrics are informative only; a failing metric never changes the reward.
    }
  }
  return { reward, components, metrics };
}
