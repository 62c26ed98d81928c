import { ORS_SESSION_ID } from "../../protocol/ors.js";
import type { Tenant } from "../tenants/keys.js";

/*
 * ORS session ids. A session id is the id its episode will have (`ep_` and 32 hex
 * digits), given out by POST /create_session before the client says which task, and the
 * server stores nothing until POST /create. So /create must tell an id it gave from one a
 * client made up, with no record to look in: the id carries a check value.
 *
 *   ep_ | 12 hex: creation time (ms) | 12 hex: 48 random bits (CSPRNG) | 8 hex: check
 *
 * The check is the first 32 bits of SHA-256 over the tenant's name and the 24 digits
 * before it, so an id is bound to the key that asked for it: another tenant's session id
 * fails the check exactly as an id never issued does, and /create refuses both the same
 * way before it reads anything (ids cannot be probed through it). An id typed by hand (all
 * zeros, a /v1 episode's id) fails it but for 1 in 2^32. The check is not keyed (the server
 * has no secret to key it with): a client that computes it can make an id for its own
 * tenant, and /create then also wants its time within the last hour, but such an id names
 * only that tenant's own episode.
 */

/** How long after /create_session its id may still open an episode (a retried /create of one already made always finds it). */
export const SESSION_ID_TTL_MS = 60 * 60 * 1000;
/** How far ahead of this server's clock an id's time may be (another process's clock). */
const CLOCK_SKEW_MS = 5 * 60 * 1000;

const encoder = new TextEncoder();

function hex(bytes: Uint8Array): string {
  let out = "";
  for (const byte of bytes) out += byte.toString(16).padStart(2, "0");
  return out;
}

/** The 8 hex digits that end a session id of `tenant` whose first 24 digits are `head`. */
async function check(tenant: string, head: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", encoder.encode(`edgegym ors session v1\0${tenant}\0${head}`));
  return hex(new Uint8Array(digest, 0, 4));
}

/** A new session id for `viewer`: the creation time, 48 random bits, and the check that binds it to the tenant. */
export async function newSessionId(viewer: Tenant, now: number = Date.now()): Promise<string> {
  const head = now.toString(16).padStart(12, "0").slice(-12) + hex(crypto.getRandomValues(new Uint8Array(6)));
  return `ep_${head}${await check(viewer.name, head)}`;
}

/** Whether POST /create_session gave `sid` to this tenant (its shape and its check; not its age). */
export async function issuedTo(viewer: Tenant, sid: string): Promise<boolean> {
  if (!ORS_SESSION_ID.test(sid)) return false;
  const head = sid.slice(3, 27);
  return sid.slice(27) === (await check(viewer.name, head));
}

/** Whether an issued id is still young enough to open an episode. */
export function fresh(sid: string, now: number = Date.now()): boolean {
  const issuedAt = Number.parseInt(sid.slice(3, 15), 16);
  return issuedAt <= now + CLOCK_SKEW_MS && issuedAt >= now - SESSION_ID_TTL_MS;
}
