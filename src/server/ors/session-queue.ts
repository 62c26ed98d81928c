/**
 * One tool call at a time per ORS session in this process, in the order they arrived. ORS's
 * client may send several calls on one session at once (`asyncio.gather` over `call_tool`);
 * the reference server runs each against the session's live object, and edgegym's turn
 * check would refuse all but one. Queued here, each takes the turn after the one before it.
 * Only the order is held in memory, never the episode: a call racing one in another process
 * is handled where the step is taken (`OrsSessions`), and an entry is gone once its call ends.
 *
 * @example
 * const queue = new SessionQueue();
 * const slot = await queue.enter(sid); // waits for the calls on `sid` that came first
 * try { … } finally { slot.leave(); }
 */
export class SessionQueue {
  /** Per session, the promise that settles when its last queued call leaves. */
  private readonly tails = new Map<string, Promise<void>>();

  /** Waits for the calls on `key` that entered before this one; `waited` says whether there were any. */
  async enter(key: string): Promise<{ waited: boolean; leave: () => void }> {
    const before = this.tails.get(key);
    let leave!: () => void;
    const left = new Promise<void>((resolve) => (leave = resolve));
    const tail = before ? before.then(() => left) : left;
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    if (before) await before;
    return { waited: before !== undefined, leave };
  }

  /** Sessions with a call queued or running (for tests). */
  get size(): number {
    return this.tails.size;
  }
}
