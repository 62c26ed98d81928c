import type { GroupRewardSpec, RewardInputs, RewardSpec, Rubric } from "./rubric.js";

/** A rubric to combine, optionally with a name prefix and a factor on all its weights. */
export interface RubricPart<State> {
  rubric: Rubric<State>;
  /** Prepended to each of its reward names (e.g. `"style/"`). Default none. */
  prefix?: string;
  /** Multiplies every weight of this rubric. Default 1. */
  scale?: number;
}

/**
 * One rubric made of several: every reward and group reward of each part, and all their
 * metrics. Names stay unique: a name already taken gets the part's position appended
 * (`format` from the second part becomes `format_2`), so two parts that both score
 * format both show in the components.
 *
 * @example
 * const rubric = combineRubrics(correctness, { rubric: judge, prefix: "judge/", scale: 0.5 });
 */
export function combineRubrics<State>(...parts: (Rubric<State> | RubricPart<State>)[]): Rubric<State> {
  const taken = new Set<string>();
  const unique = (name: string, part: number): string => {
    let out = name;
    if (taken.has(out)) out = `${name}_${part + 1}`;
    for (let k = 2; taken.has(out); k++) out = `${name}_${part + 1}_${k}`;
    taken.add(out);
    return out;
  };
  const rewards: RewardSpec<State>[] = [];
  const groupRewards: GroupRewardSpec<State>[] = [];
  const metrics: NonNullable<Rubric<State>["metrics"]>[] = [];
  parts.forEach((raw, i) => {
    const part: RubricPart<State> = "rubric" in raw ? raw : { rubric: raw };
    if (part.rubric.route) throw new Error(`combineRubrics: part ${i + 1} routes rollouts to other rubrics (an env group's); combine its members' rubrics instead`);
    const scale = part.scale ?? 1;
    if (!Number.isFinite(scale)) throw new Error(`combineRubrics: part ${i + 1} has a non-finite scale`);
    const prefix = part.prefix ?? "";
    for (const r of part.rubric.rewards) rewards.push({ ...r, name: unique(prefix + r.name, i), weight: r.weight * scale });
    for (const r of part.rubric.groupRewards ?? []) groupRewards.push({ ...r, name: unique(prefix + r.name, i), weight: r.weight * scale });
    if (part.rubric.metrics) {
      const fn = part.rubric.metrics;
      metrics.push(prefix ? (inputs) => Object.fromEntries(Object.entries(fn(inputs)).map(([k, v]) => [prefix + k, v])) : fn);
    }
  });
  const rubric: Rubric<State> = { rewards };
  if (groupRewards.length) rubric.groupRewards = groupRewards;
  if (metrics.length) {
    rubric.metrics = (inputs: RewardInputs<State>) => {
      const out: Record<string, number> = {};
      for (const fn of metrics) {
        try {
          Object.assign(out, fn(inputs));
        } catch {
          // One part's failing metrics never hide another's.
        }
      }
      return out;
    };
  }
  return rubric;
}
