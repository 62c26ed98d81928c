import { describe, expect, it } from "vitest";
import { addressInCidr, formatIp, judge, nameListed, parseAllowlist, parseAuthority, parseIp, type AllowEntry, type EgressGuard } from "./docker-egress-policy.js";

function entries(hosts: string[]): AllowEntry[] {
  const parsed = parseAllowlist(hosts);
  if ("error" in parsed) throw new Error(parsed.error);
  return parsed.entries;
}

const guard: EgressGuard = { proxyAddresses: ["172.18.0.1"], hostAddresses: ["172.18.0.1", "192.0.2.2", "fd00::2"] };
const allowed = (hosts: string[], host: string, resolved: string[] = []) => judge(entries(hosts), host, resolved, guard);

describe("parseIp / formatIp", () => {
  it("reads IPv4 and IPv6 (compressed, embedded IPv4) as 16 bytes and writes them back", () => {
    expect(formatIp(parseIp("10.1.2.3")!)).toBe("10.1.2.3");
    expect(formatIp(parseIp("::ffff:10.1.2.3")!)).toBe("10.1.2.3");
    expect(formatIp(parseIp("::ffff:a01:203")!)).toBe("10.1.2.3");
    expect(formatIp(parseIp("2001:db8::1")!)).toBe("2001:db8:0:0:0:0:0:1");
    expect(formatIp(parseIp("::")!)).toBe("0:0:0:0:0:0:0:0");
    expect(formatIp(parseIp("1:2:3:4:5:6:7:8")!)).toBe("1:2:3:4:5:6:7:8");
  });

  it("refuses what is not exactly an address", () => {
    for (const bad of ["127.1", "256.0.0.1", "1.2.3", "0x7f.0.0.1", "2130706433", "1:2:3:4:5:6:7", "1::2::3", "1:2:3:4:5:6:7:8:9", "fe80::1%eth0", "[::1]", "::1:2:3:4:5:6:7:8", "12345::", "example.com"]) {
      expect(parseIp(bad), bad).toBeNull();
    }
  });

  it("tests membership of a CIDR range, IPv4 against IPv4-mapped too", () => {
    expect(addressInCidr("172.18.3.4", "172.18.0.0/16")).toBe(true);
    expect(addressInCidr("172.19.0.1", "172.18.0.0/16")).toBe(false);
    expect(addressInCidr("::ffff:172.18.3.4", "172.18.0.0/16")).toBe(true);
    expect(addressInCidr("2001:db8::5", "2001:db8::/32")).toBe(true);
    expect(addressInCidr("10.0.0.1", "10.0.0.0/33")).toBe(false);
  });
});

describe("parseAllowlist", () => {
  it("reads names, wildcards, addresses and ranges, normalised as Harbor does", () => {
    expect(entries([" PyPI.org. ", "*.pythonhosted.org", "10.0.0.5", "192.168.0.0/16", "2001:db8::/32"]).map((e) => (e.kind === "range" ? `${e.text}/${e.bits}` : e.kind === "name" ? e.name : `*.${e.suffix}`))).toEqual([
      "pypi.org",
      "*.pythonhosted.org",
      "10.0.0.5/128",
      "192.168.0.0/16/112",
      "2001:db8::/32/32",
    ]);
  });

  it("refuses URLs, ports, paths, bad ranges and odd wildcards: the sandbox is refused, never widened", () => {
    for (const bad of ["https://pypi.org", "pypi.org:443", "pypi.org/simple", "10.0.0.0/33", "::/129", "10.0.0.0/x", "*", "*.", "a.*.com", "*.10.0.0.1", "", "exa mple.com", "-bad.com"]) {
      expect(parseAllowlist([bad]), bad).toHaveProperty("error");
    }
  });
});

describe("parseAuthority", () => {
  it("reads CONNECT targets, IPv6 in brackets", () => {
    expect(parseAuthority("PyPI.org:443")).toEqual({ host: "pypi.org", port: 443 });
    expect(parseAuthority("[2001:db8::1]:8443")).toEqual({ host: "2001:db8::1", port: 8443 });
    expect(parseAuthority("10.0.0.1:80")).toEqual({ host: "10.0.0.1", port: 80 });
    for (const bad of ["pypi.org", "pypi.org:0", "pypi.org:65536", "user@pypi.org:443", "2001:db8::1:443", "http://pypi.org:443", "a b:80"]) expect(parseAuthority(bad), bad).toBeNull();
  });
});

describe("judge", () => {
  it("matches exact names, and wildcards on subdomains only", () => {
    const list = entries(["pypi.org", "*.pythonhosted.org"]);
    expect(nameListed(list, "pypi.org")).toBe(true);
    expect(nameListed(list, "www.pypi.org")).toBe(false);
    expect(nameListed(list, "files.pythonhosted.org")).toBe(true);
    expect(nameListed(list, "a.b.pythonhosted.org")).toBe(true);
    expect(nameListed(list, "pythonhosted.org")).toBe(false);
    expect(nameListed(list, "evilpythonhosted.org")).toBe(false);
    expect(allowed(["pypi.org"], "pypi.org", ["151.101.0.223"])).toEqual({ allowed: true, addresses: ["151.101.0.223"] });
  });

  it("refuses a name nobody listed without needing its addresses", () => {
    expect(allowed(["pypi.org"], "example.com")).toEqual({ allowed: false, reason: "example.com is not in this sandbox's allowlist" });
    // A listed range does not open names: the proxy never resolves a name the list does not name.
    expect(allowed(["0.0.0.0/0"], "example.com").allowed).toBe(false);
  });

  it("refuses a listed name that resolves onto the host: loopback, link-local, unspecified, the proxy, any host address", () => {
    for (const [resolved, what] of [
      [["127.0.0.1"], "a loopback address"],
      [["::1"], "a loopback address"],
      [["::ffff:127.0.0.2"], "a loopback address"],
      [["169.254.169.254"], "a link-local address"],
      [["fe80::1"], "a link-local address"],
      [["0.0.0.0"], "an unspecified address"],
      [["172.18.0.1"], "the egress proxy itself"],
      [["192.0.2.2"], "an address of the host"],
      // One bad address refuses the whole name, even beside a good one.
      [["93.184.215.14", "127.0.0.1"], "a loopback address"],
    ] as const) {
      const verdict = allowed(["rebind.example", "*.example.org"], "rebind.example", [...resolved]);
      expect(verdict.allowed, resolved.join()).toBe(false);
      expect(verdict.allowed ? "" : verdict.reason).toContain(`resolves to ${what}`);
    }
    expect(allowed(["*.example.org"], "a.example.org", ["::1"]).allowed).toBe(false);
    expect(allowed(["rebind.example"], "rebind.example", [])).toEqual({ allowed: false, reason: "rebind.example does not resolve" });
  });

  it("allows listed addresses and ranges as listed, but never loopback, unspecified or the proxy itself", () => {
    expect(allowed(["10.0.0.5"], "10.0.0.5")).toEqual({ allowed: true, addresses: ["10.0.0.5"] });
    expect(allowed(["10.0.0.0/8"], "10.200.0.9")).toEqual({ allowed: true, addresses: ["10.200.0.9"] });
    expect(allowed(["10.0.0.0/8"], "11.0.0.1").allowed).toBe(false);
    expect(allowed(["2001:db8::/32"], "2001:db8::7")).toEqual({ allowed: true, addresses: ["2001:db8:0:0:0:0:0:7"] });
    expect(allowed(["127.0.0.1"], "127.0.0.1")).toEqual({ allowed: false, reason: "127.0.0.1 is a loopback address" });
    expect(allowed(["::/0"], "::ffff:127.0.0.1").allowed).toBe(false);
    expect(allowed(["0.0.0.0/0"], "0.0.0.0").allowed).toBe(false);
    expect(allowed(["172.18.0.1"], "172.18.0.1")).toEqual({ allowed: false, reason: "172.18.0.1 is the egress proxy itself" });
  });

  it("opens link-local and the host's own addresses only to entries that name them, not to broad ranges", () => {
    expect(allowed(["0.0.0.0/0"], "169.254.169.254").allowed).toBe(false);
    expect(allowed(["169.254.169.254"], "169.254.169.254").allowed).toBe(true);
    expect(allowed(["169.254.0.0/16"], "169.254.169.254").allowed).toBe(true);
    expect(allowed(["0.0.0.0/0"], "192.0.2.2").allowed).toBe(false);
    expect(allowed(["192.0.2.0/24"], "192.0.2.2").allowed).toBe(false);
    expect(allowed(["192.0.2.2"], "192.0.2.2").allowed).toBe(true);
    expect(allowed(["0.0.0.0/0"], "93.184.215.14").allowed).toBe(true);
  });

  it("the empty list reaches nothing", () => {
    expect(allowed([], "pypi.org").allowed).toBe(false);
    expect(allowed([], "10.0.0.1").allowed).toBe(false);
  });
});
