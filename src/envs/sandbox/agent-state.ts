import { z } from "zod";
import type { SandboxProvider, SandboxRecord } from "./types.js";

/**
 * What a harness episode keeps of its agent, inside the episode's state (so any server
 * process that reaches the container serves its endpoint and watches its end): the hash of
 * the episode's key (never the key), the limits, the running totals and, once it ended,
 * how. Pure data: the server writes it, environments only carry it.
 */
export const AgentState = z
  .object({
    /** sha256 (hex) of the episode's endpoint key. */
    keyHash: z.string(),
    upstream: z.string(),
    model: z.string(),
    command: z.string(),
    timeoutSeconds: z.number().int().min(1),
    maxCalls: z.number().int().min(1),
    maxTokens: z.number().int().min(1),
    /** When the agent was started in the container (ms since the epoch); null until it was. */
    startedAt: z.number().nullable(),
    /** The agent's process (a session leader in the container), to kill it on a limit. */
    pid: z.number().int().nullable(),
    calls: z.number().int().min(0),
    tokens: z.number().int().min(0),
    result: z
      .object({
        status: z.enum(["exited", "timed_out", "stopped", "lost"]),
        exitCode: z.number().int().nullable(),
        outputTail: z.string(),
        seconds: z.number().min(0),
      })
      .strict()
      .nullable(),
  })
  .strict();
export type AgentState = z.infer<typeof AgentState>;

/** Where and how an agent command of one episode runs. */
export interface HarnessTarget {
  provider: SandboxProvider;
  sandbox: SandboxRecord;
  /** User and working directory of the agent's process (the task's agent user and workdir). */
  user?: string;
  workdir?: string;
  /** The task's own environment variables, under the endpoint's. */
  env: Readonly<Record<string, string>>;
  /** The task's instruction: the agent gets it as EDGEGYM_INSTRUCTION and in a file. */
  instruction: string;
}
