import type { Rng } from "../../../rng.js";

/** 1 = easy, 2 = medium, 3 = hard. */
export type Level = 1 | 2 | 3;

export interface ReasoningTask {
  question: string;
  /** A reference answer (for countdown, one valid expression among many). */
  answer: string;
  /** What the verifier needs beyond the answer; JSON, kept in the task's info. */
  data: Record<string, unknown>;
}

/** A task family: a seeded generator and an exact verifier. */
export interface ReasoningFamily {
  generate(rng: Rng, level: Level): ReasoningTask;
  /** 1 when `candidate` is a correct answer to the task, else 0. */
  verify(candidate: string, task: { answer: string; data: Record<string, unknown> }): number;
}
