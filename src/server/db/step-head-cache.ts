/**
 * The heads this process wrote last, so the next step of the same episode need not read
 * its row back. A bounded map keyed by episode id that answers only for the turn the
 * entry is at.
 *
 * Safe because the cache never decides anything: every step's write is still the
 * conditional UPDATE on (id, turn, status, bytes) in SQL. If another process (a second
 * worker, a closing or scoring request elsewhere, the reaper) moved the episode on, the
 * step computed from a stale head loses its conditional write, the entry is dropped, and
 * the step re-reads the row and answers as it would have (a replay, 409, 410 …). The
 * entry holds the head exactly as this process wrote it, state included (the engine
 * clones the state before an environment sees it, so it is never mutated in place).
 */
export class StepHeadCache<Row extends { turn: number }> {
  private readonly entries = new Map<string, Row>();

  /**
   * @param maxEntries heads kept (the least recently written go first)
   * @param maxStateChars a head whose state JSON is longer is not kept: memory stays bounded by entries × this
   */
  constructor(
    private readonly maxEntries = 4096,
    readonly maxStateChars = 16 * 1024,
  ) {}

  /** The head of `id` if this process wrote it at `turn` last; otherwise undefined (read the row). */
  get(id: string, turn: number): Row | undefined {
    const row = this.entries.get(id);
    return row !== undefined && row.turn === turn ? row : undefined;
  }

  set(id: string, row: Row): void {
    this.entries.delete(id);
    this.entries.set(id, row);
    if (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
  }

  delete(id: string): void {
    this.entries.delete(id);
  }

  get size(): number {
    return this.entries.size;
  }
}
