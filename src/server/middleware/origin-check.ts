import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../context.js";
import { ApiError, errorResponse } from "../errors.js";

/** "[::1]" → "::1", "LocalHost." → "localhost": the form names are compared in. */
function normalHost(hostname: string): string {
  return hostname.toLowerCase().replace(/^\[|\]$/g, "").replace(/\.$/, "");
}

/** An address, not a name: DNS rebinding needs a name the attacker controls, so an IP in `Host` is never one. */
function isIpLiteral(host: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.includes(":");
}

/** `name` is allowed by an entry: the same name, or a subdomain of a `.example.com` entry. */
function matchesEntry(name: string, entry: string): boolean {
  const e = normalHost(entry);
  return e.startsWith(".") ? name === e.slice(1) || name.endsWith(e) : name === e;
}

export interface HostCheckOptions {
  /** The address the server listens on (`--host`): allowed as a name too. Null: not known (a Worker). */
  boundHost: string | null;
  /** Names allowed besides localhost and IP literals; `*` turns the check off. */
  allowedHosts: readonly string[];
}

/**
 * Whether a keyless server answers a request for `hostname`: localhost (and `*.localhost`),
 * any IP literal, the bound name, or an allowlisted name. Anything else is what DNS
 * rebinding looks like: a page on the attacker's name, re-pointed at 127.0.0.1, reading the
 * API with the browser's blessing (same origin as far as the browser knows).
 */
export function hostAllowed(hostname: string, options: HostCheckOptions): boolean {
  if (options.allowedHosts.includes("*")) return true;
  const name = normalHost(hostname);
  if (name === "localhost" || name.endsWith(".localhost") || isIpLiteral(name)) return true;
  if (options.boundHost !== null && name === normalHost(options.boundHost)) return true;
  return options.allowedHosts.some((entry) => matchesEntry(name, entry));
}

/**
 * On a server without API keys, refuses a `Host` it does not know (403 `host_not_allowed`).
 * A server with keys needs no such check: a rebound page has no key. It runs where the
 * runtime says where the server listens (Node) or the operator listed names (any runtime).
 *
 * @example app.use("*", hostCheck({ keyless: true, boundHost: "127.0.0.1", allowedHosts: [] }))
 */
export function hostCheck(options: HostCheckOptions & { keyless: boolean }): MiddlewareHandler<AppEnv> {
  const active = options.keyless && (options.boundHost !== null || options.allowedHosts.length > 0) && !options.allowedHosts.includes("*");
  // Every request passes here, and a server hears the same few Host values: the allowed ones
  // are remembered (a bounded set), so a step costs a lookup, not a URL parse.
  const known = new Set<string>();
  return async (c, next) => {
    if (!active) return next();
    const header = c.req.header("host");
    if (header !== undefined && known.has(header)) return next();
    const hostname = new URL(c.req.url).hostname;
    if (hostAllowed(hostname, options)) {
      if (header !== undefined && known.size < 64) known.add(header);
      return next();
    }
    return errorResponse(
      c,
      new ApiError("host_not_allowed", `this server has no API keys and answers only localhost, IP addresses and the names in EDGEGYM_ALLOWED_HOSTS; "${hostname}" is not one (add it there, or set API keys)`, { host: hostname }),
    );
  };
}

/**
 * Refuses a WebSocket upgrade whose `Origin` is present and neither the server's own nor
 * listed (403 `origin_not_allowed`). Browsers apply no CORS to WebSockets, so without this
 * any page a developer opens could drive a keyless server's sockets. Clients that are not
 * browsers send no `Origin` and pass. The own origin is compared by host and port, so a
 * proxy that ends TLS in front of the server (an `https` page, an `http` hop) still matches.
 *
 * @example app.get("/v1/ws", socketOriginCheck(["https://console.example"]), messageSocket(...))
 */
export function socketOriginCheck(allowedOrigins: readonly string[]): MiddlewareHandler<AppEnv> {
  const any = allowedOrigins.includes("*");
  const listed = new Set(allowedOrigins.map((o) => o.replace(/\/$/, "").toLowerCase()));
  return async (c, next) => {
    const origin = c.req.header("origin");
    if (origin === undefined || any || c.req.header("upgrade")?.toLowerCase() !== "websocket") return next();
    if (listed.has(origin.toLowerCase())) return next();
    let host: string | null = null;
    try {
      host = new URL(origin).host;
    } catch {
      // "null" (a sandboxed frame, a file:// page) or junk: not the server's own.
    }
    if (host !== null && host === new URL(c.req.url).host) return next();
    return errorResponse(c, new ApiError("origin_not_allowed", `a page from ${origin} may not open this server's sockets; list it in EDGEGYM_ALLOWED_ORIGINS to allow it`, { origin }));
  };
}
