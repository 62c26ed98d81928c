import { describe, expect, it } from "vitest";
import { EngineError } from "../../envs/index.js";
import type { SandboxListing, SandboxProvider } from "../../envs/sandbox/types.js";
import { sandboxAdmission } from "./admission.js";

/**
 * The admission rules over a fixed set of live boxes (what the daemon would list): the
 * counting by labels and the token bucket are plain logic. The same rules against a real
 * daemon are exercised over HTTP in test/harbor-node.test.ts (the 429 past the live cap).
 */
function listing(boxes: { tenant: string }[]): Pick<SandboxProvider, "list"> {
  const all: SandboxListing[] = boxes.map((b, i) => ({ id: `c${i}`, labels: { "edgegym.db": "db1", "edgegym.role": "episode", "edgegym.episode": `ep_${i}`, "edgegym.tenant": b.tenant }, running: true, createdAtMs: 0 }));
  return { list: async (labels) => all.filter((box) => Object.entries(labels).every(([k, v]) => box.labels[k] === v)) };
}

async function refusal(p: Promise<void>): Promise<{ quota: unknown; limit: unknown; retry: unknown } | null> {
  try {
    await p;
    return null;
  } catch (err) {
    if (!(err instanceof EngineError)) throw err;
    expect(err.code).toBe("rate_limited");
    const d = err.details as Record<string, unknown>;
    return { quota: d.quota, limit: d.limit, retry: d.retry_after_seconds };
  }
}

describe("sandbox admission", () => {
  it("caps one tenant's live boxes while another tenant still gets one", async () => {
    const admit = sandboxAdmission({ provider: listing([{ tenant: "alice" }, { tenant: "alice" }, { tenant: "bob" }]) as SandboxProvider, dbLabel: "db1", maxLive: 10, maxPerTenant: 2, createsPerMinute: 100 });
    expect(await refusal(admit("alice"))).toEqual({ quota: "sandboxes", limit: 2, retry: 5 });
    expect(await refusal(admit("bob"))).toBeNull();
  });

  it("caps the database's live boxes for everyone", async () => {
    const admit = sandboxAdmission({ provider: listing([{ tenant: "a" }, { tenant: "b" }]) as SandboxProvider, dbLabel: "db1", maxLive: 2, maxPerTenant: null, createsPerMinute: 100 });
    expect(await refusal(admit("c"))).toEqual({ quota: "sandboxes", limit: 2, retry: 5 });
  });

  it("a claim of a warm box creates nothing: only the tenant's cap applies; a fork's several boxes count together", async () => {
    const admit = sandboxAdmission({ provider: listing([{ tenant: "a" }, { tenant: "b" }]) as SandboxProvider, dbLabel: "db1", maxLive: 2, maxPerTenant: 2, createsPerMinute: 100 });
    expect(await refusal(admit("c", { claim: true }))).toBeNull();
    expect(await refusal(admit("a", { claim: true }))).toBeNull();
    const roomy = sandboxAdmission({ provider: listing([{ tenant: "a" }]) as SandboxProvider, dbLabel: "db1", maxLive: 3, maxPerTenant: 2, createsPerMinute: 100 });
    expect(await refusal(roomy("b", { count: 2 }))).toBeNull();
    expect(await refusal(roomy("b", { count: 3 }))).toEqual({ quota: "sandboxes", limit: 3, retry: 5 });
    expect(await refusal(roomy("a", { count: 2 }))).toEqual({ quota: "sandboxes", limit: 2, retry: 5 });
  });

  it("lets a burst of creations through, then the rate, with Retry-After until a token is back", async () => {
    let t = 0;
    const admit = sandboxAdmission({ provider: listing([]) as SandboxProvider, dbLabel: "db1", maxLive: 100, maxPerTenant: null, createsPerMinute: 3, now: () => t });
    for (let i = 0; i < 3; i++) expect(await refusal(admit("a"))).toBeNull();
    expect(await refusal(admit("a"))).toEqual({ quota: "sandbox_creates_per_minute", limit: 3, retry: 20 });
    t += 20_000; // a third of a minute: one token back
    expect(await refusal(admit("a"))).toBeNull();
    expect((await refusal(admit("a")))?.quota).toBe("sandbox_creates_per_minute");
  });
});
