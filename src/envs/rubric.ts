import type { ChatMessage, Score, ScoreComponent } from "../protocol/index.js";
import type { Parser } from "./parsers/parser.js";
import type { TaskRow } from "./types.js";
import { startInTurns } from "./turns.js";

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
  /** The episode's environment arguments, parsed (undefined where the caller gave none). */
  args?: unknown;
  /** A seated episode's: the seat being scored (prompt and completion are its own conversation). */
  seat?: string;
}

export type RewardFn<State> = (inputs: RewardInputs<State>) => number | Promise<number>;

export interface RewardSpec<State> {
  name: string;
  /** 0 makes it a metric: reported, not rewarded. */
  weight: number;
  description?: string;
  fn: RewardFn<State>;
}

/**
 * A reward computed over a group of rollouts of the same task (GRPO's group), e.g. a
 * bonus for the shortest correct answer or a penalty for duplicates. It receives every
 * rollout's inputs and returns one number per rollout, in order.
 */
export type GroupRewardFn<State> = (group: readonly RewardInputs<State>[]) => readonly number[] | Promise<readonly number[]>;

export interface GroupRewardSpec<State> {
  name: string;
  /** 0 makes it a metric: reported, not rewarded. */
  weight: number;
  description?: string;
  fn: GroupRewardFn<State>;
}

export interface Rubric<State> {
  rewards: RewardSpec<State>[];
  /** Figures reported beside the reward, e.g. turns or tool calls. */
  metrics?: (inputs: RewardInputs<State>) => Record<string, number>;
  /**
   * Rewards over a group of rollouts. Scored together by `scoreRubricGroup` (the engine's
   * `scoreGroup`, and `POST /v1/envs/{id}/score` for items sharing a `group`); a rollout
   * scored alone is a group of one.
   */
  groupRewards?: GroupRewardSpec<State>[];
  /**
   * Hands a rollout to another rubric (an environment group scores each task with its own
   * environment's rubric). Rollouts routed to the same `key` are scored as one group.
   * Throwing reports the rollout as unscorable (reward 0, the error on a `route` component).
   */
  route?: (inputs: RewardInputs<State>) => RubricRoute;
}

/** Where `Rubric.route` sends a rollout: the rubric and the inputs it reads, and a name prefix for its components. */
export interface RubricRoute {
  key: string;
  rubric: Rubric<unknown>;
  inputs: RewardInputs<unknown>;
  /** Prepended to every component and metric name (e.g. `"math/"`). */
  prefix?: string;
}

export interface RubricOptions<State> {
  metrics?: Rubric<State>["metrics"];
  groupRewards?: GroupRewardSpec<State>[];
}

/**
 * @example
 * const rubric = defineRubric([
 *   { name: "correct", weight: 1, fn: ({ completion, answer, parser }) => Number(parser.parseAnswer(completion) === answer) },
 *   { name: "format", weight: 0.2, fn: ({ completion, parser }) => parser.formatReward(completion) },
 * ]);
 */
export function defineRubric<State>(rewards: RewardSpec<State>[], metricsOrOptions?: Rubric<State>["metrics"] | RubricOptions<State>): Rubric<State> {
  const options: RubricOptions<State> = typeof metricsOrOptions === "function" ? { metrics: metricsOrOptions } : (metricsOrOptions ?? {});
  const groupRewards = options.groupRewards ?? [];
  const names = new Set<string>();
  for (const r of [...rewards, ...groupRewards]) {
    if (names.has(r.name)) throw new Error(`rubric has two rewards named "${r.name}"`);
    if (!Number.isFinite(r.weight)) throw new Error(`reward "${r.name}" has a non-finite weight`);
    names.add(r.name);
  }
  const rubric: Rubric<State> = { rewards };
  if (options.metrics) rubric.metrics = options.metrics;
  if (groupRewards.length) rubric.groupRewards = groupRewards;
  return rubric;
}

function errorText(err: unknown): string {
  // Errors that carry their own client-safe text (a judge failure: no URL, no upstream body) report only that.
  if (err instanceof Error && "clientText" in err && typeof err.clientText === "string") return err.clientText;
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

/** Scores a group of rollouts with a rubric's functions somewhere else (another thread), in order. */
export type RubricScorer = (group: readonly RewardInputs<unknown>[]) => Promise<Score[]>;

const scorers = new WeakMap<object, RubricScorer>();

/**
 * A copy of `rubric` (the same rewards, for listing and hashing) whose scoring `scorer`
 * does instead of this thread: `edgegym serve` scores a `--env` module's rubric in a
 * worker thread it can stop (src/server/node/scoring-threads.ts).
 */
export function scoredBy<State>(rubric: Rubric<State>, scorer: RubricScorer): Rubric<State> {
  const copy: Rubric<State> = { ...rubric };
  scorers.set(copy, scorer);
  return copy;
}

/**
 * `count` scores of 0 whose every component carries `error` (the rubric's rewards and group
 * rewards in order; one `score` component for a routed rubric or one without rewards): the
 * shape of a rollout that could not be scored at all, e.g. `score_timeout: …`.
 */
export function unscored(rubric: Rubric<unknown>, count: number, error: string): Score[] {
  const specs = rubric.route ? [] : [...rubric.rewards, ...(rubric.groupRewards ?? [])];
  const parts = specs.length ? specs.map(({ name, weight }) => ({ name, weight })) : [{ name: "score", weight: 1 }];
  return Array.from({ length: count }, () => ({ reward: 0, components: parts.map((p) => ({ ...p, score: 0, error })), metrics: {} }));
}

/**
 * Runs every reward function. One that throws or returns a non-number scores 0 and its
 * error is reported on its component, so one broken function never sinks the rollout.
 */
export async function scoreRubric<State>(rubric: Rubric<State>, inputs: RewardInputs<State>): Promise<Score> {
  if (rubric.groupRewards?.length || rubric.route || scorers.has(rubric)) return (await scoreRubricGroup(rubric, [inputs]))[0] as Score;
  return totalScore(rubric, inputs, await scoreRewards(rubric, inputs));
}

/** The per-rollout components, each failure caught and reported on its component. */
async function scoreRewards<State>(rubric: Rubric<State>, inputs: RewardInputs<State>): Promise<ScoreComponent[]> {
  return Promise.all(
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
}

/** Weighted sum, zero-weight components as metrics, then the rubric's own metrics. */
function totalScore<State>(rubric: Rubric<State>, inputs: RewardInputs<State>, components: ScoreComponent[]): Score {
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

/**
 * Scores a group of rollouts of one task: each rollout's own rewards, then every group
 * reward once over the whole group. A group reward that throws, or returns anything but
 * one finite number per rollout, scores 0 with its error on every member's component.
 */
export async function scoreRubricGroup<State>(rubric: Rubric<State>, group: readonly RewardInputs<State>[]): Promise<Score[]> {
  const scorer = scorers.get(rubric);
  if (scorer) return scorer(group as readonly RewardInputs<unknown>[]);
  if (rubric.route) return scoreRouted(rubric.route, group);
  const [own, groupValues] = await Promise.all([
    startInTurns(group, (inputs) => scoreRewards(rubric, inputs)),
    Promise.all((rubric.groupRewards ?? []).map((spec) => runGroupReward(spec, group))),
  ]);
  (rubric.groupRewards ?? []).forEach(({ name, weight }, k) => {
    const result = groupValues[k] as { values: readonly number[] } | { error: string };
    own.forEach((components, i) => {
      if ("error" in result) return void components.push({ name, weight, score: 0, error: result.error });
      const value = result.values[i];
      if (typeof value !== "number" || !Number.isFinite(value)) components.push({ name, weight, score: 0, error: `returned ${String(value)} for rollout ${i}, not a finite number` });
      else components.push({ name, weight, score: value });
    });
  });
  return own.map((components, i) => totalScore(rubric, group[i] as RewardInputs<State>, components));
}

async function runGroupReward<State>(spec: GroupRewardSpec<State>, group: readonly RewardInputs<State>[]): Promise<{ values: readonly number[] } | { error: string }> {
  try {
    const values = await spec.fn(group);
    if (!Array.isArray(values) || values.length !== group.length) {
      return { error: `returned ${Array.isArray(values) ? `${values.length} values` : String(values)} for a group of ${group.length}` };
    }
    return { values };
  } catch (err) {
    return { error: errorText(err) };
  }
}

function prefixed(score: Score, prefix: string): Score {
  if (!prefix) return score;
  return {
    reward: score.reward,
    components: score.components.map((c) => ({ ...c, name: prefix + c.name })),
    metrics: Object.fromEntries(Object.entries(score.metrics).map(([k, v]) => [prefix + k, v])),
  };
}

/** Scores each rollout with the rubric its route names, rollouts sharing a key as one group. */
async function scoreRouted<State>(route: NonNullable<Rubric<State>["route"]>, group: readonly RewardInputs<State>[]): Promise<Score[]> {
  const scores = new Array<Score>(group.length);
  const byKey = new Map<string, { routes: RubricRoute[]; members: number[] }>();
  group.forEach((inputs, i) => {
    try {
      const r = route(inputs);
      const entry = byKey.get(r.key) ?? { routes: [], members: [] };
      entry.routes.push(r);
      entry.members.push(i);
      byKey.set(r.key, entry);
    } catch (err) {
      scores[i] = { reward: 0, components: [{ name: "route", weight: 1, score: 0, error: errorText(err) }], metrics: {} };
    }
  });
  await Promise.all(
    [...byKey.values()].map(async ({ routes, members }) => {
      const first = routes[0] as RubricRoute;
      const scored = await scoreRubricGroup(first.rubric, routes.map((r) => r.inputs));
      members.forEach((i, k) => (scores[i] = prefixed(scored[k] as Score, first.prefix ?? "")));
    }),
  );
  return scores;
}
