import { z } from "zod";
import { defineTool, type Tool } from "../../src/envs/index.js";

/**
 * A tool named `hang` that runs until its signal aborts (or 30 s pass), for tests of a
 * step whose client goes away. `events` records "started" and "aborted"; `started`
 * resolves once a call is running.
 */
export function hangingTool(): { tool: Tool; events: string[]; started: Promise<void> } {
  const events: string[] = [];
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const tool = defineTool<unknown, z.ZodObject>({
    name: "hang",
    description: "Runs until stopped.",
    parameters: z.object({}).strict(),
    timeoutMs: 60_000,
    run: (_args, { signal }) =>
      new Promise<string>((resolve, reject) => {
        events.push("started");
        markStarted();
        const timer = setTimeout(() => resolve("finished"), 30_000);
        signal.addEventListener("abort", () => {
          clearTimeout(timer);
          events.push("aborted");
          reject(new Error("stopped"));
        });
      }),
  });
  return { tool, events, started };
}
