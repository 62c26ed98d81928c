/** Largest time toISOString writes as `YYYY-MM-DDTHH:MM:SS.mmmZ` (the end of year 9999). */
const LAST_PLAIN_MS = 253_402_300_799_999;

let cachedSecond = Number.NaN;
let cachedPrefix = "";

/**
 * `new Date(ms).toISOString()`, with the text up to the second kept from the last call: a
 * step writes `expires_at` on every reply, and at thousands of steps a second almost every
 * call falls in the second before it (the Date round trip was ~3% of an HTTP step's server
 * CPU in --cpu-prof). Times outside years 0–9999, or not whole milliseconds, go to Date.
 */
export function isoTime(ms: number): string {
  if (!Number.isSafeInteger(ms) || ms < 0 || ms > LAST_PLAIN_MS) return new Date(ms).toISOString();
  const rest = ms % 1000;
  const second = ms - rest;
  if (second !== cachedSecond) {
    cachedSecond = second;
    // "YYYY-MM-DDTHH:MM:SS." (20 characters) of the whole second.
    cachedPrefix = new Date(second).toISOString().slice(0, 20);
  }
  return `${cachedPrefix}${rest < 10 ? "00" : rest < 100 ? "0" : ""}${rest}Z`;
}
