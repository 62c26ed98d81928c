import { execFile } from "node:child_process";

/**
 * The host-side filter of the egress network's bridge. Docker's `Internal` network stops
 * forwarding past the host, but the bridge's gateway address is the host itself, and a
 * container on it reaches every host service listening on any host address (0.0.0.0:8787,
 * the edgegym server, included), because packets to the host go through INPUT, which Docker
 * leaves open. So traffic arriving on the egress bridge is rejected except TCP to the
 * proxy's own address and port.
 *
 * Rules live in a chain of their own (`EDGEGYM-<bridge>`), jumped to from INPUT for that
 * interface only; each rule is checked (`-C`) before it is added, so several server
 * processes (and restarts) converge on one copy. Allow rules are inserted at the top and the
 * final REJECT appended once, so a concurrent process never leaves the chain without it.
 */
const TIMEOUT_MS = 10_000;
// A server started from a service manager may not have the sbin directories on PATH.
const PATH = [process.env.PATH ?? "", "/usr/local/sbin", "/usr/sbin", "/sbin"].filter(Boolean).join(":");

function iptables(args: readonly string[]): Promise<{ ok: boolean; stderr: string }> {
  return new Promise((resolve) => {
    execFile("iptables", ["-w", "5", ...args], { timeout: TIMEOUT_MS, env: { ...process.env, PATH } }, (err, _stdout, stderr) => {
      resolve({ ok: !err, stderr: String(stderr || (err instanceof Error ? err.message : "")).trim() });
    });
  });
}

async function must(args: readonly string[]): Promise<void> {
  const run = await iptables(args);
  if (!run.ok) throw new Error(`iptables ${args.join(" ")}: ${run.stderr || "failed"}`);
}

/** Adds `rule` to `chain` unless it is there (`at`: "top" inserts, "end" appends). */
async function ensureRule(chain: string, rule: readonly string[], at: "top" | "end"): Promise<void> {
  if ((await iptables(["-C", chain, ...rule])).ok) return;
  await must(at === "top" ? ["-I", chain, "1", ...rule] : ["-A", chain, ...rule]);
}

/** The chain of one bridge (iptables chain names are at most 28 characters; interface names 15). */
export function firewallChain(bridge: string): string {
  return `EDGEGYM-${bridge}`.slice(0, 28);
}

/**
 * Lets the bridge's containers reach `gateway:port` on the host and nothing else of it.
 * Throws (with iptables' message) when the rules cannot be installed: no iptables, or not
 * root / CAP_NET_ADMIN; the caller then refuses the sandbox rather than run it unfiltered.
 */
export async function guardBridge(bridge: string, gateway: string, port: number): Promise<void> {
  const chain = firewallChain(bridge);
  const created = await iptables(["-N", chain]);
  if (!created.ok && !/exists/i.test(created.stderr)) throw new Error(`iptables -N ${chain}: ${created.stderr || "failed"}`);
  await ensureRule(chain, ["-p", "tcp", "-d", gateway, "--dport", String(port), "-j", "ACCEPT"], "top");
  await ensureRule(chain, ["-j", "REJECT"], "end");
  // The jump last: until it is there the chain is not consulted, and it is complete by then.
  await ensureRule("INPUT", ["-i", bridge, "-j", chain], "top");
}

/** Removes the jump and the chain (tests; an operator retiring the network). Missing ones are fine. */
export async function unguardBridge(bridge: string): Promise<void> {
  const chain = firewallChain(bridge);
  while ((await iptables(["-C", "INPUT", "-i", bridge, "-j", chain])).ok) await must(["-D", "INPUT", "-i", bridge, "-j", chain]);
  if ((await iptables(["-F", chain])).ok) await must(["-X", chain]);
}
