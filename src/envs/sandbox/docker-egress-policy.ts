/**
 * Which destinations a sandbox with an `allowlist` network may reach through the egress
 * proxy (docker-egress.node.ts): pure matching, no sockets and no DNS, so every rule is
 * unit-tested here and the proxy only resolves names and moves bytes.
 *
 * Entries are what Harbor's `allowed_hosts` holds (see harbor/network-policy.ts): exact
 * host names, `*.suffix` wildcards (subdomains only, not the suffix itself), IPv4/IPv6
 * addresses and CIDR ranges. The provider parses them again here rather than trusting its
 * caller: a list it cannot read is refused, never widened.
 *
 * Addresses are compared as 16 bytes, IPv4 as IPv4-mapped IPv6 (`::ffff:a.b.c.d`), so
 * `::ffff:127.0.0.1` is loopback exactly as `127.0.0.1` is.
 */

/** One allowlist entry, parsed. */
export type AllowEntry =
  | { kind: "name"; name: string }
  /** `*.example.com`: `suffix` is "example.com"; matches `a.example.com`, `a.b.example.com`, never `example.com`. */
  | { kind: "suffix"; suffix: string }
  /** An address (`bits` 128) or a CIDR range, as 16 bytes and a prefix length over them. */
  | { kind: "range"; base: Uint8Array; bits: number; text: string };

/** Addresses the proxy must never connect to on a sandbox's behalf, whatever its list says. */
export interface EgressGuard {
  /** The proxy's own listening addresses (the egress network's gateway): a tunnel to itself is a loop and a way onto the host. */
  proxyAddresses: readonly string[];
  /** Every address of the host's interfaces: a name that resolves onto the host is DNS rebinding, refused. */
  hostAddresses: readonly string[];
}

export type Judgement = { allowed: true; addresses: string[] } | { allowed: false; reason: string };

const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

function parseIpv4(text: string): number[] | null {
  return IPV4.test(text) ? text.split(".").map(Number) : null;
}

function parseIpv6(text: string): Uint8Array | null {
  let s = text;
  // A trailing dotted quad ("::ffff:1.2.3.4") stands for the last two groups.
  const lastColon = s.lastIndexOf(":");
  if (lastColon < 0) return null;
  const tail = s.slice(lastColon + 1);
  if (tail.includes(".")) {
    const v4 = parseIpv4(tail);
    if (!v4) return null;
    s = `${s.slice(0, lastColon + 1)}${((v4[0]! << 8) | v4[1]!).toString(16)}:${((v4[2]! << 8) | v4[3]!).toString(16)}`;
  }
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const groups = (half: string): number[] | null => {
    if (half === "") return [];
    const out: number[] = [];
    for (const g of half.split(":")) {
      if (!/^[0-9a-f]{1,4}$/i.test(g)) return null;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  const head = groups(halves[0]!);
  const rest = halves.length === 2 ? groups(halves[1]!) : [];
  if (!head || !rest) return null;
  const missing = 8 - head.length - rest.length;
  // Without "::" there must be eight groups; with it, it stands for at least one.
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const all = [...head, ...new Array<number>(missing).fill(0), ...rest];
  const bytes = new Uint8Array(16);
  all.forEach((g, i) => {
    bytes[2 * i] = g >> 8;
    bytes[2 * i + 1] = g & 0xff;
  });
  return bytes;
}

/** An IPv4 or IPv6 literal as 16 bytes (IPv4 mapped), or null. No zone ids, no brackets, no shorthand IPv4 ("127.1"). */
export function parseIp(text: string): Uint8Array | null {
  const v4 = parseIpv4(text);
  if (v4) return Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ...v4]);
  return text.includes(":") ? parseIpv6(text) : null;
}

function inRange(addr: Uint8Array, base: Uint8Array, bits: number): boolean {
  for (let i = 0; i < 16 && bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((addr[i]! & mask) !== (base[i]! & mask)) return false;
  }
  return true;
}

const MAPPED = parseIp("::ffff:0.0.0.0")!;
const range = (cidr: string): { base: Uint8Array; bits: number } => {
  const [address, bits] = cidr.split("/");
  const base = parseIp(address!)!;
  return { base, bits: Number(bits) + (parseIpv4(address!) ? 96 : 0) };
};
const LOOPBACK = [range("127.0.0.0/8"), range("::1/128")];
// 0.0.0.0/8 is "this network": connecting to 0.0.0.0 reaches the host itself on Linux.
const UNSPECIFIED = [range("0.0.0.0/8"), range("::/128")];
const LINK_LOCAL = [range("169.254.0.0/16"), range("fe80::/10")];

const within = (addr: Uint8Array, ranges: readonly { base: Uint8Array; bits: number }[]): boolean => ranges.some((r) => inRange(addr, r.base, r.bits));

function sameAddress(addr: Uint8Array, list: readonly string[]): boolean {
  return list.some((text) => {
    const other = parseIp(text);
    return other !== null && inRange(addr, other, 128);
  });
}

/** Back to text: dotted quad for IPv4-mapped, else eight hex groups (what `net.connect` takes). */
export function formatIp(addr: Uint8Array): string {
  if (inRange(addr, MAPPED, 96)) return Array.from(addr.subarray(12)).join(".");
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((addr[i]! << 8) | addr[i + 1]!).toString(16));
  return groups.join(":");
}

function isHostname(name: string): boolean {
  return name.length > 0 && name.length <= 253 && name.split(".").every((label) => LABEL.test(label));
}

/**
 * The entries of an allowlist, parsed; the first entry that is not a host name, `*.suffix`,
 * address or CIDR range is an error (the caller refuses the sandbox). Entries are trimmed,
 * lower-cased and lose a trailing dot, as Harbor's normaliser does.
 */
export function parseAllowlist(hosts: readonly string[]): { entries: AllowEntry[] } | { error: string } {
  const entries: AllowEntry[] = [];
  for (const raw of hosts) {
    const host = raw.trim().toLowerCase().replace(/\.+$/, "");
    const bad = { error: `allowlist entry ${JSON.stringify(raw)} is not a host name, "*.suffix" wildcard, IP address or CIDR range` };
    if (host.includes("/")) {
      const [address = "", bits = "", ...rest] = host.split("/");
      const base = parseIp(address);
      const max = parseIpv4(address) ? 32 : 128;
      if (rest.length || !base || !/^\d{1,3}$/.test(bits) || Number(bits) > max) return bad;
      entries.push({ kind: "range", base, bits: Number(bits) + (max === 32 ? 96 : 0), text: host });
      continue;
    }
    const address = parseIp(host);
    if (address) {
      entries.push({ kind: "range", base: address, bits: 128, text: host });
      continue;
    }
    if (host.startsWith("*.")) {
      const suffix = host.slice(2);
      if (!isHostname(suffix) || parseIpv4(suffix)) return bad;
      entries.push({ kind: "suffix", suffix });
      continue;
    }
    if (!isHostname(host)) return bad;
    entries.push({ kind: "name", name: host });
  }
  return { entries };
}

/** A destination's host as the proxy compares it: lower case, no trailing dot, no IPv6 brackets. */
export function normalizeHost(host: string): string {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  return bare.toLowerCase().replace(/\.+$/, "");
}

/** `host:port` of a CONNECT request (`[v6]:port` for IPv6), or null when it is not one. */
export function parseAuthority(target: string): { host: string; port: number } | null {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]/@\s]+):(\d{1,5})$/.exec(target);
  if (!match) return null;
  const port = Number(match[2]);
  if (port < 1 || port > 65_535) return null;
  return { host: normalizeHost(match[1]!), port };
}

/** Whether a host name (not an address) is listed by name or wildcard. */
export function nameListed(entries: readonly AllowEntry[], host: string): boolean {
  return entries.some((e) => (e.kind === "name" ? e.name === host : e.kind === "suffix" ? host.endsWith(`.${e.suffix}`) : false));
}

/**
 * Whether an address literal the sandbox asked for may be reached.
 * - Loopback, unspecified and the proxy's own address: never (a list cannot open the host's
 *   loopback services or loop the proxy into itself).
 * - Link-local (169.254/16, fe80::/10: cloud metadata services): only through an entry that
 *   lies inside link-local, so a broad range such as `0.0.0.0/0` does not open it.
 * - An address of the host itself: only through an entry naming exactly that address, for the
 *   same reason (a broad range means "the internet", not the machine that runs the server).
 * - Anything else: when a range or address entry covers it.
 */
function addressVerdict(entries: readonly AllowEntry[], addr: Uint8Array, guard: EgressGuard): string | null {
  const shown = formatIp(addr);
  if (within(addr, LOOPBACK)) return `${shown} is a loopback address`;
  if (within(addr, UNSPECIFIED)) return `${shown} is an unspecified address`;
  if (sameAddress(addr, guard.proxyAddresses)) return `${shown} is the egress proxy itself`;
  const ranges = entries.filter((e): e is Extract<AllowEntry, { kind: "range" }> => e.kind === "range" && inRange(addr, e.base, e.bits));
  if (ranges.length === 0) return `${shown} is not in this sandbox's allowlist`;
  if (within(addr, LINK_LOCAL) && !ranges.some((e) => LINK_LOCAL.some((l) => e.bits >= l.bits && inRange(e.base, l.base, l.bits)))) {
    return `${shown} is link-local, reachable only through an entry inside link-local`;
  }
  if (sameAddress(addr, guard.hostAddresses) && !ranges.some((e) => e.bits === 128)) {
    return `${shown} is an address of the host, reachable only through an entry naming it exactly`;
  }
  return null;
}

/** The addresses a listed name may not resolve to: the host, by any of its addresses (DNS rebinding). */
function resolvedVerdict(host: string, addr: Uint8Array, guard: EgressGuard): string | null {
  const shown = formatIp(addr);
  if (within(addr, LOOPBACK)) return `${host} resolves to a loopback address (${shown})`;
  if (within(addr, UNSPECIFIED)) return `${host} resolves to an unspecified address (${shown})`;
  if (within(addr, LINK_LOCAL)) return `${host} resolves to a link-local address (${shown})`;
  if (sameAddress(addr, guard.proxyAddresses)) return `${host} resolves to the egress proxy itself (${shown})`;
  if (sameAddress(addr, guard.hostAddresses)) return `${host} resolves to an address of the host (${shown})`;
  return null;
}

/** What a destination needs before it can be judged: nothing for an address, DNS for a listed name, refusal otherwise. */
export function classify(entries: readonly AllowEntry[], host: string): { kind: "address"; addr: Uint8Array } | { kind: "resolve" } | { kind: "refuse"; reason: string } {
  const addr = parseIp(host);
  if (addr) return { kind: "address", addr };
  if (!isHostname(host)) return { kind: "refuse", reason: `${JSON.stringify(host)} is not a host name or IP address` };
  // A name that no entry lists is refused before any lookup: the proxy never resolves a name
  // the sandbox chose freely (that would be a channel out through the host's resolver).
  if (!nameListed(entries, host)) return { kind: "refuse", reason: `${host} is not in this sandbox's allowlist` };
  return { kind: "resolve" };
}

/**
 * The verdict on one destination. `resolved` are the addresses DNS gave for a listed name
 * (ignored for an address literal); any of them landing on the host refuses the whole name,
 * and the proxy connects only to the addresses returned here, never resolving again.
 */
export function judge(entries: readonly AllowEntry[], host: string, resolved: readonly string[], guard: EgressGuard): Judgement {
  const what = classify(entries, host);
  if (what.kind === "refuse") return { allowed: false, reason: what.reason };
  if (what.kind === "address") {
    const reason = addressVerdict(entries, what.addr, guard);
    return reason ? { allowed: false, reason } : { allowed: true, addresses: [formatIp(what.addr)] };
  }
  const addresses: string[] = [];
  for (const text of resolved) {
    const addr = parseIp(text);
    if (!addr) return { allowed: false, reason: `${host} resolves to ${JSON.stringify(text)}, not an address` };
    const reason = resolvedVerdict(host, addr, guard);
    if (reason) return { allowed: false, reason };
    addresses.push(formatIp(addr));
  }
  if (addresses.length === 0) return { allowed: false, reason: `${host} does not resolve` };
  return { allowed: true, addresses };
}

/** Whether `address` (IPv4 or IPv6 text) lies inside `cidr`; false when either does not parse. */
export function addressInCidr(address: string, cidr: string): boolean {
  const parsed = parseAllowlist([cidr]);
  const addr = parseIp(address);
  if (!addr || "error" in parsed) return false;
  const entry = parsed.entries[0];
  return entry?.kind === "range" && inRange(addr, entry.base, entry.bits);
}
