import { z } from "zod";
import { AgentState } from "../../sandbox/agent-state.js";

/**
 * A Harbor episode's state: which task, which box, and the agent's running command time.
 * Everything a tool or the verifier needs is here (not in any process's memory), so any
 * server process that reaches the same Docker host serves the next step.
 */
export const HarborState = z
  .object({
    task: z.string(),
    sandbox: z.object({ provider: z.string(), id: z.string(), image: z.string(), imageDigest: z.string() }).strict(),
    /** The box's settings, from task.toml: the agent's user, working directory and environment. */
    agentUser: z.string().nullable(),
    workdir: z.string().nullable(),
    env: z.record(z.string(), z.string()),
    /** `[agent].timeout_sec`: a budget of command time (null: none). */
    agentTimeoutSec: z.number().nullable(),
    commandMs: z.number().min(0),
    commands: z.number().int().min(0),
    /** Set when the box was found gone: the episode ends with `sandbox_lost`. */
    lost: z.boolean(),
    /** A fork's box: the snapshot image of its parent's box it started from (removed with the last fork using it). */
    snapshot: z.string().optional(),
    /** A harness episode's agent (reset with `agent`): written by the server, see agent-state.ts. */
    agent: AgentState.optional(),
  })
  .strict();
export type HarborState = z.infer<typeof HarborState>;

/** A fresh episode's state for a task's new box (its settings from task.toml, no command run yet). */
export function initialHarborState(
  task: { name: string; config: { agentUser: string | null; workdir: string | null; env: Record<string, string>; agentTimeoutSec: number | null } },
  box: { provider: string; id: string; image: string; imageDigest: string },
  imageDigest: string,
): HarborState {
  return {
    task: task.name,
    sandbox: { ...box, imageDigest: box.imageDigest || imageDigest },
    agentUser: task.config.agentUser,
    workdir: task.config.workdir,
    env: task.config.env,
    agentTimeoutSec: task.config.agentTimeoutSec,
    commandMs: 0,
    commands: 0,
    lost: false,
  };
}
