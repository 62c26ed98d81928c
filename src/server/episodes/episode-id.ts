/**
 * Episode ids: `ep_` and 32 hex digits, the first 12 the creation time in milliseconds
 * and the other 20 random (80 bits from the platform's CSPRNG, so an id is still not
 * guessable from another).
 *
 * Time first, like UUIDv7, so ids of episodes made together sort together. Every index
 * keyed by episode id (the head's primary key, the turns' (episode_id, turn) key, the
 * lineage) then takes the inserts of the episodes being played in a few pages at its
 * right edge instead of one random page per episode: a group commit of 64 concurrent
 * steps writes fewer pages. Measured in-process (bench-echo, 64 concurrent, alternating
 * rounds): 0.84x the server CPU per persisted step of fully random ids
 * (docs/performance.md). The id reveals when the episode was made, which its
 * `created_at` says anyway.
 */
export function newEpisodeId(now: number = Date.now()): string {
  const random = crypto.getRandomValues(new Uint8Array(10));
  let hex = now.toString(16).padStart(12, "0").slice(-12);
  for (const byte of random) hex += byte.toString(16).padStart(2, "0");
  return `ep_${hex}`;
}
