import type { EpisodeFork, ForkList, ForkListQuery } from "../../protocol/index.js";
import type { ForkCursor } from "../db/episode-store.js";
import type { EpisodeStorage } from "../db/stores.js";
import { ApiError } from "../errors.js";
import { canSee, type Tenant } from "../tenants/keys.js";

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * The cursor is base64url of `created_at:id`, the sort key of the last fork of a page. It
 * names a position, not a row, so a page still follows when that fork has been reaped. It
 * is opaque to clients and read back as hostile input: anything that does not decode to a
 * whole number and an id of 1–64 characters is a 400.
 */
export function encodeForkCursor(c: ForkCursor): string {
  const bytes = new TextEncoder().encode(`${c.createdAt}:${c.id}`);
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

export function decodeForkCursor(text: string): ForkCursor {
  const bad = () => new ApiError("invalid_request", "`cursor` is not a cursor this server gave: pass a page's `next_cursor` as it came");
  let decoded: string;
  try {
    const binary = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
    decoded = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(Uint8Array.from(binary, (ch) => ch.charCodeAt(0)));
  } catch {
    throw bad();
  }
  const match = /^(\d{1,15}):(.{1,64})$/su.exec(decoded);
  if (!match?.[1] || !match[2]) throw bad();
  return { createdAt: Number(match[1]), id: match[2] };
}

/**
 * A page of the episodes forked from `id` (its direct children: `parent.episode_id` is
 * `id`). The parent must be one the viewer may see, live or expired (forks outlive their
 * parent); another tenant's answers 404 as an unknown id does, and the query reads only the
 * viewer's own rows unless the viewer is an admin.
 */
export async function listForks(store: EpisodeStorage, viewer: Tenant, id: string, query: ForkListQuery, now: number): Promise<ForkList> {
  const parent = await store.get(id);
  if (!parent || !canSee(viewer, parent.tenant)) throw new ApiError("episode_not_found", `no episode "${id}"`);
  const after = query.cursor === undefined ? null : decodeForkCursor(query.cursor);
  // One row more than the page says whether another page follows, without a count.
  const rows = await store.forksOf(parent.id, viewer.admin ? null : viewer.name, query.limit + 1, after);
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  const forks: EpisodeFork[] = page.map((r) => ({
    episode_id: r.id,
    fork_turn: r.forkTurn,
    turn: r.turn,
    // An episode past its TTL is expired whether or not the reaper has marked it yet, as GET /v1/episodes/{id} says.
    status: r.expiresAt <= now ? "expired" : r.status,
    reward: r.reward === null ? null : Number(r.reward),
    created_at: iso(r.createdAt),
  }));
  return { episode_id: parent.id, forks, next_cursor: rows.length > query.limit && last ? encodeForkCursor({ createdAt: last.createdAt, id: last.id }) : null };
}
