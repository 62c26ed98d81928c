/** One HTTP request of a load generator: its status and body text. */
export type HttpCall = (method: "POST", path: string, body: unknown) => Promise<{ status: number; text: string }>;

/** The assistant message every bench step sends (bench/echo-env.js counts its words). */
export const STEP_MESSAGE = { role: "assistant", content: "one two three four five" } as const;

/**
 * One load-generating worker over HTTP: plays bench-echo episodes through `call` until
 * `until` (performance.now() ms), reset not counted, then steps until done; calls `record`
 * with each step's latency and returns the errors (a refused reset is retried, a refused
 * step ends its episode). The socket twin is socketEpisodes in session-socket.ts.
 */
export async function httpEpisodes(call: HttpCall, until: number, record: (ms: number) => void): Promise<number> {
  let errors = 0;
  while (performance.now() < until) {
    const reset = await call("POST", "/v1/envs/bench-echo/episodes", {});
    if (reset.status !== 201) {
      errors++;
      continue;
    }
    const id = (JSON.parse(reset.text) as { episode_id: string }).episode_id;
    let turn = 0;
    let done = false;
    while (!done && performance.now() < until) {
      const t = performance.now();
      const res = await call("POST", `/v1/episodes/${id}/step`, { turn, message: STEP_MESSAGE });
      if (res.status !== 200) {
        errors++;
        break;
      }
      record(performance.now() - t);
      ({ turn, done } = JSON.parse(res.text) as { turn: number; done: boolean });
    }
  }
  return errors;
}
