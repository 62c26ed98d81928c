import type { EvalJob, EvalProgressEvent } from "../../src/protocol/index.js";
import { authHeaders } from "./api.js";

/**
 * Follows `GET /v1/evals/{id}/events` with fetch rather than EventSource, which cannot send an
 * Authorization header (the key would have to go in the URL). Parses the event stream's
 * `event:`/`data:` lines; returns a function that stops it.
 */
export function followEval(evalId: string, onProgress: (e: EvalProgressEvent) => void, onDone: (job: EvalJob) => void, onError: (message: string) => void): () => void {
  const abort = new AbortController();
  void (async () => {
    try {
      const res = await fetch(`/v1/evals/${encodeURIComponent(evalId)}/events`, { headers: { ...authHeaders(), Accept: "text/event-stream" }, signal: abort.signal });
      if (!res.ok || !res.body) throw new Error(`events: ${res.status}`);
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += value;
        // Bounded: a frame is small; a stream that never ends a frame is cut off.
        if (buffer.length > 4_000_000) throw new Error("event stream frame too large");
        let end: number;
        while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, "");
          let event = "message";
          const data: string[] = [];
          for (const line of frame.split(/\r?\n/)) {
            if (line.startsWith("event:")) event = line.slice(6).trim();
            else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
          }
          if (!data.length) continue;
          const parsed: unknown = JSON.parse(data.join("\n"));
          if (event === "progress") onProgress(parsed as EvalProgressEvent);
          else if (event === "done") {
            onDone(parsed as EvalJob);
            abort.abort();
            return;
          }
        }
      }
    } catch (err) {
      if (!abort.signal.aborted) onError(err instanceof Error ? err.message : String(err));
    }
  })();
  return () => abort.abort();
}
