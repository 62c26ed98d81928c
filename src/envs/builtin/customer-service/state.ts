import { z } from "zod";
import { SeatAssignment } from "../../seats.js";
import { Database } from "./world.js";

/** The seat of the model being trained: the store's customer-service agent. */
export const AGENT = "agent";
/** The simulated customer (a scripted or an LLM user). */
export const USER = "user";

/** How a conversation ended, when it did not run out of turns. */
export const ENDINGS = ["user_stop", "transfer_to_human"] as const;
export const VERDICTS = ["resolved", "unresolved"] as const;
export type Verdict = (typeof VERDICTS)[number];

const Count = z.number().int().nonnegative();

/** One episode: its copy of the task's database, who is authenticated, whose turn it is, and how it ended. */
export const CustomerServiceState = z.strictObject({
  task_id: z.string(),
  /** Who plays each seat (recorded so a rescore or replay is exact). */
  seats: SeatAssignment,
  db: Database,
  auth_user_id: z.string().nullable(),
  to_play: z.enum([AGENT, USER]).nullable(),
  /** The agent's messages (tool calls or words). */
  turns: Count,
  /** The user's messages. */
  user_turns: Count,
  tool_calls: Count,
  /** Successful database writes (cancel, address, return, exchange). */
  writes: Count,
  transferred: z.boolean(),
  ended: z.enum(ENDINGS).nullable(),
  /** The verdict the user's last message gave (`VERDICT: resolved`), if any. */
  verdict: z.enum(VERDICTS).nullable(),
});
export type CustomerServiceState = z.infer<typeof CustomerServiceState>;
