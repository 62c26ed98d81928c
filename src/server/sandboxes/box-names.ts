import type { SandboxListing } from "../../envs/sandbox/types.js";
import { SANDBOX_LABELS } from "./labels.js";

/**
 * Container names of warm boxes. A container's labels are fixed when it is created, so a
 * box started before any episode asked for it (the warm pool) cannot be labelled with its
 * episode. It is named instead: `edgegym-warm-<db>-<random>` while unclaimed, renamed at
 * claim to `edgegym-ep-<db>-<tenant tag>-<episode id>` (the provider's claim decides
 * which of two racing resets gets it); the name, like a label, is on the daemon for every
 * process (the sweep, the admission counts) to read.
 */
const WARM_PREFIX = "edgegym-warm-";
const CLAIMED_PREFIX = "edgegym-ep-";
const CLAIMED = /^edgegym-ep-([0-9a-f]{16})-([0-9a-f]{12}|none)-(ep_[0-9a-f]{1,64})$/;

function randomHex(bytes: number): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A short, one-way tag of a tenant's name: enough to count its boxes, without writing the name on the daemon. */
export async function tenantTag(tenant: string | undefined): Promise<string> {
  if (tenant === undefined) return "none";
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(tenant)));
  return Array.from(digest.subarray(0, 6), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A fresh unclaimed warm box's name. */
export function warmBoxName(dbLabel: string): string {
  return `${WARM_PREFIX}${dbLabel}-${randomHex(8)}`;
}

/** The name a claimed warm box takes: its database, its tenant's tag, its episode. */
export async function claimedBoxName(dbLabel: string, episodeId: string, tenant: string | undefined): Promise<string> {
  return `${CLAIMED_PREFIX}${dbLabel}-${await tenantTag(tenant)}-${episodeId}`;
}

/** Whose a box of this database is: an episode's (by its labels, or a claimed warm box's name), an unclaimed warm box, or neither. */
export type BoxOwner = { kind: "episode"; episodeId: string; tenant?: string; tenantTag?: string } | { kind: "warm"; pool: string } | { kind: "unknown" };

export function boxOwner(box: SandboxListing, dbLabel: string): BoxOwner {
  const role = box.labels[SANDBOX_LABELS.role];
  if (role === "episode") {
    const episodeId = box.labels[SANDBOX_LABELS.episode];
    const tenant = box.labels[SANDBOX_LABELS.tenant];
    return episodeId ? { kind: "episode", episodeId, ...(tenant === undefined ? {} : { tenant }) } : { kind: "unknown" };
  }
  if (role === "warm") {
    const claimed = box.name ? CLAIMED.exec(box.name) : null;
    if (claimed && claimed[1] === dbLabel) return { kind: "episode", episodeId: claimed[3] as string, tenantTag: claimed[2] as string };
    if (box.name?.startsWith(`${WARM_PREFIX}${dbLabel}-`)) return { kind: "warm", pool: box.labels[SANDBOX_LABELS.pool] ?? "" };
  }
  return { kind: "unknown" };
}
