/** Labels every container (and snapshot image) of an episode carries: which server database and which episode own it. */
export const SANDBOX_LABELS = {
  /** A stable name of the database (a hash of its path or URL, never credentials): servers sharing it share containers. */
  db: "edgegym.db",
  episode: "edgegym.episode",
  /** `episode` (an episode's box), `warm` (started before an episode claimed it; its name says whose it is), `snapshot` (a fork's base image). */
  role: "edgegym.role",
  /** The tenant whose episode it is: the per-tenant `sandboxes` quota counts these. */
  tenant: "edgegym.tenant",
  /** A warm box's pool: a hash of the spec it was made with (image, limits, network, settings), so a claim takes an identical box. */
  pool: "edgegym.pool",
  /**
   * The pid of the server that owns a box of an in-memory database (`--db :memory:`): no
   * other server shares that database, so when the process is gone nothing could ever
   * sweep its boxes by their database; any server's sweep removes them instead.
   */
  memoryOwner: "edgegym.memory-owner",
} as const;
