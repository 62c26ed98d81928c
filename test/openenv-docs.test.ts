import { describe, expect, it } from "vitest";
import type { ChildServer } from "./support/node-server.js";
import { pinnedVenvPython, pythonBlocks, runDocBlock, serverPair } from "./support/python-client.js";

/*
 * The Python blocks of docs/openenv.md (but the TRL section's), run as printed with openenv-core from the pinned
 * venv (scripts/openenv-venv.sh) against a real server: only the address and the key
 * placeholder are swapped in. Skipped with a note without the venv, failed when
 * EDGEGYM_REQUIRE_OPENENV=1.
 */
const { python, ready } = pinnedVenvPython({ name: "openenv", envVar: "OPENENV" }, "openenv docs test");

// The TRL section's blocks ("# TRL: …") need TRL and torch: trainer-adapter/tests/test_trl_openenv.py runs them.
const blocks = pythonBlocks("docs/openenv.md").filter((block) => !block.startsWith("# TRL:"));

describe.skipIf(!ready)("docs/openenv.md's client code", () => {
  const servers = serverPair("edgegym-openenv-docs-", "docs:sk-docs");
  const run = (server: ChildServer, code: string): string[] => runDocBlock(python, server, servers.dir, code, "sk-docs");

  it("has the five scripts", () => {
    expect(blocks.map((b) => b.split("\n")[0])).toEqual([
      "# A single-turn episode (reverse-text), then its state.",
      "# Tools: a calculator call, its result, the final answer.",
      "# A multi-turn game whose connection drops after the first move, continued on a new one.",
      "# A client that sends the server's API key.",
      "# kuhn-poker: one client per seat; neither ever reads the other's card.",
    ]);
  });

  it("runs each as printed and prints what its comments say", () => {
    const { open, keyed } = servers;
    const [single, tools, reconnect, key, seats] = blocks as [string, string, string, string, string];
    const one = run(open, single);
    expect(one[0]).toBe("1.2 True");
    expect(one[2]).toMatch(/'step_count': 1/);
    const two = run(open, tools);
    expect(two[0]).toBe("[{'role': 'tool', 'tool_call_id': 'call_1', 'content': '5'}]");
    expect(two[1]).toMatch(/^True \d/);
    const three = run(open, reconnect);
    expect(three[0]).toBe("True 1");
    expect(three[1]).toMatch(/^(You win!|You lose\.|Draw).* \d/);
    expect(run(keyed, key)[0]).toMatch(/^ep_/);
    const poker = run(open, seats);
    const mine = /Your card is the (\w+)/.exec(poker[0] ?? "")?.[1];
    expect(mine).toBeDefined();
    expect(poker[1]).toBe("p2 [{'role': 'user', 'content': 'You bet 1 chip.'}]");
    expect(poker[2]).toBe("p2");
    expect(poker[3]).toBe("Your opponent bet 1 chip. Your move: call or fold.");
    expect(poker[4]).toMatch(/^True -?[\d.]+ -?[\d.]+$/);
    // A fold shows no card: p1's printed lines name only its own.
    expect(poker.join("\n").match(/the (Jack|Queen|King)/g)).toEqual([`the ${mine}`]);
  }, 180_000);
});
