/**
 * A Harbor task's network, per phase, as edgegym's `SandboxNetwork`.
 *
 * Harbor (`models/task/config.py`): `[environment].network_mode` is the baseline —
 * "public" when unset, the default — and `[agent]` / `[verifier]` may each override it
 * with their own `network_mode` (+ `allowed_hosts`). The deprecated
 * `[environment].allow_internet = false` means "no-network" only when the task sets
 * neither `network_mode` nor `allowed_hosts` there. `allowed_hosts` without
 * `network_mode = "allowlist"` is an error, as in Harbor.
 */
import type { SandboxNetwork } from "../../sandbox/types.js";

export type HarborNetworkMode = "public" | "no-network" | "allowlist";

/** The network fields of one table, as parsed. */
export interface NetworkFields {
  network_mode?: HarborNetworkMode | null | undefined;
  allowed_hosts?: string[] | null | undefined;
}

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const IPV6 = /^[0-9a-f:.]+$/;

function isIpv6(value: string): boolean {
  // A loose check (hex groups, "::" at most once, an optional trailing IPv4): the
  // provider resolves entries itself, this only keeps URLs and ports out.
  if (!IPV6.test(value) || value.split("::").length > 2) return false;
  const groups = value.split(":");
  return groups.length >= 3 && groups.length <= 9 && groups.every((g) => g === "" || /^[0-9a-f]{1,4}$/.test(g) || IPV4.test(g));
}

function isCidr(value: string): boolean {
  const [address, bits, ...rest] = value.split("/");
  if (rest.length || address === undefined || bits === undefined || !/^\d{1,3}$/.test(bits)) return false;
  const n = Number(bits);
  return (IPV4.test(address) && n <= 32) || (isIpv6(address) && n <= 128);
}

function isHostname(value: string): boolean {
  const wildcard = value.startsWith("*.");
  const name = wildcard ? value.slice(2) : value;
  if (!name || name.includes("*")) return false;
  // A plain IPv4 address is an entry; "*.10.0.0.1" is not a pattern of anything.
  if (IPV4.test(name)) return !wildcard;
  return name.length <= 253 && name.split(".").every((label) => LABEL.test(label));
}

/**
 * Harbor's normalisation of `allowed_hosts` (trimmed, lower case, no trailing dot), with
 * its rule: hostnames, `*.suffix` wildcards, IP addresses and CIDR ranges — never a URL,
 * a port or a path. Returns the message of the first bad entry instead of throwing, so the
 * schema can report it at the field.
 */
export function normalizeAllowedHosts(hosts: readonly string[]): { hosts: string[] } | { error: string } {
  const out: string[] = [];
  for (const raw of hosts) {
    const host = raw.trim().toLowerCase().replace(/\.+$/, "");
    if (!host) return { error: "allowed_hosts entries must be non-empty hostnames" };
    const ok = host.includes("/") ? isCidr(host) : host.includes(":") ? isIpv6(host) : isHostname(host);
    if (!ok) return { error: `allowed_hosts entry "${raw}" is not a hostname, "*.suffix" wildcard, IP address or CIDR range (no URLs, ports or paths)` };
    if (!out.includes(host)) out.push(host);
  }
  return { hosts: out };
}

function toSandboxNetwork(mode: HarborNetworkMode, hosts: readonly string[]): SandboxNetwork {
  if (mode === "public") return { mode: "public" };
  if (mode === "no-network") return { mode: "none" };
  // An empty allowlist reaches nothing, as in Harbor; the provider enforces the list or refuses.
  return { mode: "allowlist", hosts: [...hosts] };
}

/** The `[environment]` baseline: `network_mode`, else `allow_internet`, else public. */
export function baselineNetwork(environment: NetworkFields & { allow_internet?: boolean | null | undefined }): SandboxNetwork {
  if (environment.network_mode != null) return toSandboxNetwork(environment.network_mode, environment.allowed_hosts ?? []);
  if (environment.allow_internet === false) return { mode: "none" };
  return { mode: "public" };
}

/** One phase's network: its own `network_mode` when set, else the baseline. */
export function phaseNetwork(phase: NetworkFields, baseline: SandboxNetwork): SandboxNetwork {
  return phase.network_mode != null ? toSandboxNetwork(phase.network_mode, phase.allowed_hosts ?? []) : baseline;
}
