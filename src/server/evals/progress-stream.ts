import type { SSEStreamingApi } from "hono/streaming";
import type { EvalProgressEvent } from "../../protocol/index.js";
import type { Tenant } from "../tenants/keys.js";
import { isTerminal, type EvalService } from "./eval-service.js";

const POLL_MS = 1000;
const MIN_GAP_MS = 200;
const KEEP_ALIVE_MS = 15_000;

/**
 * Writes a job's progress to an SSE stream until the job ends or the client leaves: a
 * `progress` event when the progress changed, `done` with the final job, a keep-alive
 * comment when quiet. It wakes when a rollout of the job lands in this process, else
 * polls (another process may be running the job), never more often than MIN_GAP_MS.
 */
export async function streamEvalProgress(stream: SSEStreamingApi, service: Pick<EvalService, "get" | "subscribe">, viewer: Tenant, id: string): Promise<void> {
  let wake: (() => void) | null = null;
  let aborted = false;
  const unsubscribe = service.subscribe(id, () => wake?.());
  stream.onAbort(() => {
    aborted = true;
    wake?.();
  });
  let last = "";
  let lastWrite = Date.now();
  let n = 0;
  try {
    while (!aborted) {
      const job = await service.get(viewer, id);
      const data = JSON.stringify({ eval_id: job.eval_id, status: job.status, progress: job.progress } satisfies EvalProgressEvent);
      if (data !== last) {
        await stream.writeSSE({ event: "progress", data, id: String(++n) });
        last = data;
        lastWrite = Date.now();
      }
      if (isTerminal(job.status)) {
        await stream.writeSSE({ event: "done", data: JSON.stringify(job), id: String(++n) });
        break;
      }
      if (Date.now() - lastWrite >= KEEP_ALIVE_MS) {
        await stream.write(": keep-alive\n\n");
        lastWrite = Date.now();
      }
      await stream.sleep(MIN_GAP_MS);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, POLL_MS);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = null;
    }
  } finally {
    unsubscribe();
  }
}
