import { defineRubric, type RewardInputs } from "../../rubric.js";
import type { CustomerServiceState } from "./state.js";
import { expectedDatabaseOf, taskById } from "./tasks.js";
import { tablesMatch } from "./world.js";

/**
 * The reward, scored once per seat (the engine sets `inputs.seat`) from the episode's
 * state, so both seats get the same numbers: the agent's is the one trained on, the user
 * seat's mirrors it. All or nothing, as tau-bench's: 1 exactly when the database ends as
 * the task expects and, on a task with `ask_verdict`, the user's last message says
 * `VERDICT: resolved`; otherwise 0.
 *
 * - `db_match` (weight 1): 1 when the users and orders tables equal the expected ones
 *   (the initial database with the task's actions replayed, tasks.ts), compared as
 *   canonical JSON. Products are never written, so they are not compared.
 * - `user_verdict` (weight 1): 0 on a task that asks no verdict, and when the user said
 *   `resolved`. When the task asks and the user did not say so (said `unresolved`, gave no
 *   verdict, or the conversation ran out of turns), it takes back db_match's point (−1 when
 *   db_match is 1, else 0), so the total stays 0 or 1.
 */

function episodeState(inputs: RewardInputs<CustomerServiceState>): CustomerServiceState {
  if (!inputs.state) throw new Error("customer-service scores episodes (their database), not bare completions");
  return inputs.state;
}

function dbMatch(state: CustomerServiceState): number {
  return Number(tablesMatch(state.db, expectedDatabaseOf(taskById(state.task_id))));
}

export const customerServiceRubric = defineRubric<CustomerServiceState>(
  [
    {
      name: "db_match",
      weight: 1,
      description: "1 when the episode's users and orders tables equal the task's expected ones (its actions replayed on its initial database), checked by code.",
      fn: (inputs) => dbMatch(episodeState(inputs)),
    },
    {
      name: "user_verdict",
      weight: 1,
      description:
        "Only on tasks that ask for the user's verdict: −1 (taking back db_match's point) unless the user's last message says `VERDICT: resolved`; 0 otherwise, so the total is 1 only when the database is right and the user is satisfied.",
      fn: (inputs) => {
        const state = episodeState(inputs);
        if (!taskById(state.task_id).ask_verdict || state.verdict === "resolved") return 0;
        return dbMatch(state) === 1 ? -1 : 0;
      },
    },
  ],
  ({ state }): Record<string, number> =>
    state
      ? {
          tool_calls: state.tool_calls,
          turns: state.turns,
          user_turns: state.user_turns,
          writes: state.writes,
          transferred: Number(state.transferred),
        }
      : {},
);
