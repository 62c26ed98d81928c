import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../context.js";
import { ApiError, errorResponse } from "../errors.js";
import { buildKeyTable, parseKeyEntries, PUBLIC_TENANT, type KeyTableEntry, type Tenant } from "../tenants/keys.js";

/** Compares without an early exit, so response time does not reveal a key's prefix. */
function sameText(a: string, b: string): boolean {
  const x = new TextEncoder().encode(a);
  const y = new TextEncoder().encode(b);
  let diff = x.length ^ y.length;
  for (let i = 0; i < Math.max(x.length, y.length); i++) diff |= (x[i % (x.length || 1)] ?? 0) ^ (y[i % (y.length || 1)] ?? 0);
  return diff === 0;
}

/** The one tenant of a server with no keys: everyone shares it, as before tenancy. */
const OPEN: Tenant = { name: PUBLIC_TENANT, admin: false };

/**
 * Requires `Authorization: Bearer <key>` with one of `keys` (entries `name:key` or a bare
 * key; src/server/tenants/keys.ts) or `adminKeys`, and sets the tenant the request acts
 * as (`c.get("tenant")`). With no keys configured it lets everything through as the one
 * tenant "public" (a local server needs no set-up). Entries are parsed here, when the app
 * is built, so a bad one stops the server at start, not at the first request.
 *
 * `keyHeader` names a second header that may carry the key bare, for a wire whose client
 * sends it so (the ORS client sends `X-API-Key`); an empty one counts as absent.
 *
 * @example app.use("/v1/*", bearerAuth({ keys: ["alice:sk-a", "sk-b"], adminKeys: ["ops:sk-admin"] }))
 */
export function bearerAuth(options: { keys: readonly string[]; adminKeys?: readonly string[]; keyHeader?: string }): MiddlewareHandler<AppEnv> {
  const entries = parseKeyEntries(options.keys, options.adminKeys ?? [], { tenant: "API keys (EDGEGYM_API_KEYS / api_keys)", admin: "admin API keys (EDGEGYM_ADMIN_API_KEYS / admin_api_keys)" });
  const open = entries.tenant.length === 0 && entries.admin.length === 0;
  // Bare keys are named by a SHA-256 prefix, which Web Crypto computes asynchronously: once, on first use.
  let table: Promise<KeyTableEntry[]> | undefined;
  return async (c, next) => {
    if (open) {
      c.set("tenant", OPEN);
      return next();
    }
    const header = c.req.header("authorization") ?? "";
    const match = /^Bearer\s+(.+)$/i.exec(header);
    const token = match?.[1]?.trim() || (options.keyHeader ? c.req.header(options.keyHeader)?.trim() : undefined);
    if (!token) {
      const how = options.keyHeader ? `\`Authorization: Bearer <key>\` or \`${options.keyHeader}: <key>\`` : "`Authorization: Bearer <key>`";
      return errorResponse(c, new ApiError("unauthorized", `this server requires an API key: send ${how}`, undefined, { "WWW-Authenticate": "Bearer" }));
    }
    table ??= buildKeyTable(entries);
    // Every key is compared (no early exit), so timing does not say which entry matched.
    let found: Tenant | undefined;
    for (const entry of await table) if (sameText(token, entry.key)) found ??= entry.tenant;
    if (!found) return errorResponse(c, new ApiError("unauthorized", "API key not recognised", undefined, { "WWW-Authenticate": "Bearer" }));
    c.set("tenant", found);
    return next();
  };
}
