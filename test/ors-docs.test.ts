import { describe, expect, it } from "vitest";
import type { ChildServer } from "./support/node-server.js";
import { pinnedVenvPython, pythonBlocks, runDocBlock, serverPair } from "./support/python-client.js";

/*
 * The Python blocks of docs/ors.md, run as printed with openreward and TRL's adapter from the
 * pinned venv (scripts/ors-venv.sh) against a real server: only the address and the key
 * placeholder are swapped in. Skipped with a note without the venv, failed when
 * EDGEGYM_REQUIRE_ORS=1.
 */
const { python, ready } = pinnedVenvPython({ name: "ors", envVar: "ORS" }, "ors docs test");

const blocks = pythonBlocks("docs/ors.md");

describe.skipIf(!ready)("docs/ors.md's client code", () => {
  const servers = serverPair("edgegym-ors-docs-", "docs:sk-docs");
  const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", OPENREWARD_DISABLE_UPDATE_CHECK: "1", TRL_EXPERIMENTAL_SILENCE: "1" };
  const run = (server: ChildServer, code: string): string[] => runDocBlock(python, server, servers.dir, code, "sk-docs", env);

  it("has the five scripts", () => {
    expect(blocks.map((b) => b.split("\n")[0])).toEqual([
      "# Splits, tasks and a single-turn episode (reverse-text).",
      "# Tools: a calculator call, its result, then the answer (tool-math).",
      "# TRL's ORS adapter (trl.experimental.openreward): one episode, as GRPOTrainer drives it.",
      "# A client that sends the server's API key (as X-API-Key; edgegym takes it beside Bearer).",
      "# kuhn-poker: the session plays p2 against the environment's nash player as p1.",
    ]);
  });

  it("runs each as printed and prints what its comments say", () => {
    const { open, keyed } = servers;
    const [single, tools, trl, key, seats] = blocks as [string, string, string, string, string];
    expect(run(open, single).slice(0, 4)).toEqual(["['train', 'eval'] True", "{'split': 'train', 'index': 0}", "True 1.2", "lcs_ratio True"]);
    expect(run(open, tools).slice(0, 3)).toEqual(["['calculator', 'respond']", "5 False None", "True True"]);
    expect(run(open, trl)[0]).toBe("True [1.2]");
    expect(run(keyed, key)[0]).toBe("['train', 'eval']");
    expect(run(open, seats).slice(0, 2)).toEqual(["True", "True p2 True"]);
  }, 300_000);
});
