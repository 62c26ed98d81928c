/** What the episode index holds of one episode: enough for idempotency keys, tenant usage and the reaper. */
export interface IndexEntry {
  id: string;
  tenant: string;
  /** The scoped idempotency key of the reset or fork that made it (null: none given). */
  idempotencyKey: string | null;
  status: string;
  storedBytes: number;
  expiresAt: number;
}

/** Bytes an episode's steps may add before its object reports them to the index (quota accuracy vs index writes). */
export const REPORT_BYTES = 64 * 1024;

/** Rows the index drops per reaper run: bounds the cron's work. */
export const INDEX_REAP_BATCH = 1000;
