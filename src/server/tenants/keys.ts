/**
 * API keys as tenants. A key entry is `name:key` or a bare `key`; the name is who owns
 * the episodes and eval jobs made with that key. A bare key is named `key_` + the first
 * 12 hex digits of its SHA-256: stable across restarts and processes, and not the key
 * (48 bits of a hash say nothing useful about a random key). Several keys may share a
 * name (rotation: the old and new key are one tenant). Keys are never logged or returned.
 */

/** Who is asking: the tenant a request acts as, and whether it may see every tenant's rows. */
export interface Tenant {
  name: string;
  admin: boolean;
}

/** The one tenant of a server with no keys, and the owner of rows made before tenancy existed. */
export const PUBLIC_TENANT = "public";

/** A tenant name: what may appear before the first `:` of a key entry. */
const NAME = /^[A-Za-z0-9_.-]{1,64}$/;

export interface KeyEntry {
  /** Null for a bare key: the name is derived from the key (see `deriveTenantName`). */
  name: string | null;
  key: string;
}

/**
 * Parses one entry. `name:key` when the part before the first `:` is a valid name;
 * anything else with a `:` is refused rather than guessed at, since a key that itself
 * contains `:` would otherwise be silently split. `where` names the setting for the message.
 */
export function parseKeyEntry(raw: string, where: string): KeyEntry {
  const entry = raw.trim();
  const colon = entry.indexOf(":");
  if (colon < 0) {
    if (!entry) throw new Error(`${where}: an empty key`);
    return { name: null, key: entry };
  }
  const name = entry.slice(0, colon);
  const key = entry.slice(colon + 1);
  if (!NAME.test(name)) {
    throw new Error(`${where}: "${name.slice(0, 64)}" is not a tenant name (1-64 of A-Z a-z 0-9 _ . -); write entries as name:key, or a bare key without ":"`);
  }
  if (name === PUBLIC_TENANT) throw new Error(`${where}: the tenant name "${PUBLIC_TENANT}" is reserved (the open server's tenant and the owner of rows made before tenancy); pick another`);
  if (!key) throw new Error(`${where}: tenant "${name}" has an empty key after ":"`);
  return { name, key };
}

/** Parses every entry and checks that no key is given two different names or is both a tenant's and an admin's. */
export function parseKeyEntries(tenantKeys: readonly string[], adminKeys: readonly string[], where: { tenant: string; admin: string }): { tenant: KeyEntry[]; admin: KeyEntry[] } {
  const tenant = tenantKeys.map((k) => parseKeyEntry(k, where.tenant));
  const admin = adminKeys.map((k) => parseKeyEntry(k, where.admin));
  const seen = new Map<string, { name: string | null; admin: boolean }>();
  for (const [list, isAdmin] of [[tenant, false], [admin, true]] as const) {
    for (const e of list) {
      const before = seen.get(e.key);
      if (before && (before.name !== e.name || before.admin !== isAdmin)) {
        throw new Error(`${isAdmin ? where.admin : where.tenant}: the same key is listed twice under different names or roles (tenant "${before.name ?? "(derived)"}"); list each key once`);
      }
      seen.set(e.key, { name: e.name, admin: isAdmin });
    }
  }
  return { tenant, admin };
}

/** `key_` + 12 hex digits of SHA-256(key). Async because Web Crypto is, on Node and Workers alike. */
export async function deriveTenantName(key: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key)));
  return `key_${[...digest.slice(0, 6)].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

export interface KeyTableEntry {
  key: string;
  tenant: Tenant;
}

/** Every accepted key with the tenant it acts as. */
export async function buildKeyTable(entries: { tenant: KeyEntry[]; admin: KeyEntry[] }): Promise<KeyTableEntry[]> {
  const table: KeyTableEntry[] = [];
  for (const [list, admin] of [[entries.tenant, false], [entries.admin, true]] as const) {
    for (const e of list) table.push({ key: e.key, tenant: { name: e.name ?? (await deriveTenantName(e.key)), admin } });
  }
  return table;
}

/** Whether `viewer` may see a row owned by `owner`: its own, or any with an admin key. */
export function canSee(viewer: Tenant, owner: string): boolean {
  return viewer.admin || viewer.name === owner;
}
