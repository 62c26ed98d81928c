import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AnyEnvironment, EpisodeSnapshot } from "../src/envs/index.js";
import { scoreEpisode, startEpisode, stepEpisode } from "../src/envs/index.js";

/**
 * The `// file:` code blocks of docs/authoring.md, written out as the reader would write
 * them and run: the guide's examples must work as printed. Their `edgegym` and `zod`
 * imports point at this checkout.
 */
const ROOT = join(import.meta.dirname, "..");
let dir: string;
const modules: Record<string, Record<string, unknown>> = {};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "edgegym-docs-"));
  const guide = await readFile(join(ROOT, "docs", "authoring.md"), "utf8");
  const blocks = [...guide.matchAll(/```ts\n\/\/ file: (\S+)\n([\s\S]*?)```/g)];
  expect(blocks.length).toBeGreaterThanOrEqual(4);
  const edgegym = pathToFileURL(join(ROOT, "src", "envs", "public.ts")).href;
  const zod = import.meta.resolve("zod");
  for (const [, name, code] of blocks) {
    const source = (code as string).replaceAll('from "edgegym"', `from "${edgegym}"`).replaceAll('from "zod"', `from "${zod}"`);
    await writeFile(join(dir, name as string), source);
  }
  for (const [, name] of blocks) modules[name as string] = (await import(join(dir, name as string))) as Record<string, unknown>;
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const env = (file: string, name: string) => modules[file]?.[name] as AnyEnvironment;

async function step(e: AnyEnvironment, snap: EpisodeSnapshot, content: string | null, calls: [string, unknown][] = []) {
  const tool_calls = calls.map(([name, args], i) => ({ id: `c${snap.turn}-${i}`, type: "function" as const, function: { name, arguments: JSON.stringify(args) } }));
  return stepEpisode(e, snap, { role: "assistant", content, ...(tool_calls.length ? { tool_calls } : {}) });
}

describe("docs/authoring.md examples", () => {
  it("capitals: a right answer scores 1.2 on every training task", async () => {
    const capitals = env("capitals.ts", "capitals");
    expect([capitals.dataset.size("train"), capitals.dataset.size("eval")]).toEqual([3, 1]);
    for (let index = 0; index < 3; index++) {
      const start = await startEpisode(capitals, { index });
      const answer = (await capitals.dataset.row("train", index)).answer;
      const done = (await step(capitals, start, `<answer>${answer}</answer>`)).snapshot;
      expect(done.stopReason).toBe("single_turn");
      expect((await scoreEpisode(capitals, done)).reward).toBeCloseTo(1.2, 10);
    }
  });

  it("capitals: the episode the guide plays by hand with curl scores what it prints", async () => {
    const guide = await readFile(join(ROOT, "docs", "authoring.md"), "utf8");
    const prompt = /"role":"user","content":"([^"]+)"/.exec(guide)?.[1];
    const answer = /"content":"(<answer>[^<]+<\/answer>)"/.exec(guide)?.[1];
    const printed = Number(/"score":\{"reward":([\d.]+)/.exec(guide)?.[1]);
    const capitals = env("capitals.ts", "capitals");
    const start = await startEpisode(capitals, { index: 0 });
    expect(start.messages.at(-1)?.content).toBe(prompt);
    const done = (await step(capitals, start, answer as string)).snapshot;
    expect((await scoreEpisode(capitals, done)).reward).toBeCloseTo(printed, 10);
    expect(printed).toBe(1.2);
  });

  it("guess-number: a binary search finds the secret and the game ends itself", async () => {
    const game = env("guess-number.ts", "guessNumber");
    let snap = await startEpisode(game, { seed: 42, args: { max: 100 } });
    expect(snap.messages.at(-1)).toEqual({ role: "user", content: "I picked a number from 1 to 100. Your guess?" });
    let lo = 1;
    let hi = 100;
    while (!snap.done) {
      const guess = Math.floor((lo + hi) / 2);
      const out = await step(game, snap, `<guess>${guess}</guess>`);
      const hint = out.reply[0]?.content;
      if (hint === "Higher.") lo = guess + 1;
      if (hint === "Lower.") hi = guess - 1;
      snap = out.snapshot;
    }
    expect(snap.stopReason).toBe("solved");
    const score = await scoreEpisode(game, snap);
    expect(score.components[0]).toEqual({ name: "solved", weight: 1, score: 1 });
    expect(snap.turn).toBeLessThanOrEqual(7);
    const bad = await step(game, await startEpisode(game, { seed: 1 }), "fifty");
    expect(bad.reply[0]?.content).toBe("Write a whole number as <guess>N</guess>.");
  });

  it("shop: tools fill the cart kept in state, hidden from the model", async () => {
    const shop = env("shop.ts", "shop");
    expect(shop.toolDefinitions().map((t) => [t.function.name, Object.keys(t.function.parameters.properties as object)])).toEqual([
      ["add_to_cart", ["item", "quantity"]],
      ["cart_total", []],
    ]);
    let snap = await startEpisode(shop, { index: 0 });
    snap = (await step(shop, snap, null, [["add_to_cart", { item: "pear", quantity: 2 }], ["add_to_cart", { item: "apple", quantity: 3 }]])).snapshot;
    const total = await step(shop, snap, null, [["cart_total", {}]]);
    expect(total.reply[0]?.content).toBe("3.00");
    snap = (await step(shop, total.snapshot, "<answer>3.00</answer>")).snapshot;
    expect(snap.stopReason).toBe("no_tool_calls");
    const score = await scoreEpisode(shop, snap);
    expect(score.components.map((c) => [c.name, c.score])).toEqual([["total", 1], ["cart", 1], ["format", 1]]);
  });

  it("mixed: the group routes each task to its member", async () => {
    const mixed = env("mixed.ts", "mixed");
    expect(mixed.dataset.size("train")).toBe(5);
    expect((await mixed.dataset.row("train", 1)).info).toMatchObject({ env_id: "shop" });
  });
});

