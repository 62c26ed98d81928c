/**
 * One macrotask turn: what was queued meanwhile (other requests, `/health`) runs before
 * the caller goes on. setImmediate where the runtime has it (Node); setTimeout(0) elsewhere.
 */
export function yieldToEventLoop(): Promise<void> {
  const immediate = (globalThis as { setImmediate?: (fn: () => void) => unknown }).setImmediate;
  return new Promise((resolve) => (immediate ? immediate(resolve) : setTimeout(resolve, 0)));
}

/**
 * Starts `start(item)` for each item in order with a turn of the event loop between
 * starts, then waits for them all. Rewards are mostly synchronous, so starting a batch in
 * one `Promise.all` would run all of it before the server answers anything else; here
 * the longest pause is one item's synchronous part. Async work (a judge call) still
 * overlaps: an item does not wait for the one before it to finish, only to start.
 *
 * @example const scores = await startInTurns(group, (inputs) => scoreRewards(rubric, inputs));
 */
export async function startInTurns<T, R>(items: readonly T[], start: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const running: Promise<R>[] = [];
  for (let i = 0; i < items.length; i++) {
    if (i > 0) await yieldToEventLoop();
    const started = start(items[i] as T, i);
    // Observed here so an early rejection is not reported as unhandled while later items start; Promise.all below still rejects with it.
    started.catch(() => {});
    running.push(started);
  }
  return Promise.all(running);
}
