import { describe, expect, it } from "vitest";
import { z } from "zod";
import { builtinEnvs } from "./builtin/index.js";
import { envContentHash, fingerprint, hashAs, normalizedSource } from "./content-hash.js";
import { proceduralDataset, rowsDataset } from "./dataset.js";
import { singleTurnEnv } from "./define.js";
import { envVersionMismatch } from "./env-versions.js";
import { EnvRegistry } from "./registry.js";
import { defineRubric, type RewardFn } from "./rubric.js";
import type { TaskRow } from "./types.js";

const rows = (words: string[]): TaskRow[] => words.map((w) => ({ prompt: `Reverse: ${w}`, answer: Array.from(w).reverse().join("") }));

/** A fresh environment object each call, so the per-object cache never answers for another. */
function echo(overrides: { version?: string; words?: string[]; weight?: number; system?: string; compatibleWith?: string[]; trim?: boolean; exact?: (a: string | null, b: string | null) => boolean } = {}) {
  const exact = overrides.exact ?? ((a, b) => a === b);
  const fn: RewardFn<unknown> = overrides.trim
    ? ({ completion, answer, parser }) => Number(parser.parseAnswer(completion)?.trim() === answer)
    : ({ completion, answer, parser }) => Number(exact(parser.parseAnswer(completion), answer));
  return singleTurnEnv({
    id: "echo",
    version: overrides.version ?? "1.0.0",
    ...(overrides.compatibleWith ? { compatibleWith: overrides.compatibleWith } : {}),
    description: "test",
    systemPrompt: overrides.system ?? "Reverse the text.",
    dataset: rowsDataset({ train: rows(overrides.words ?? ["abc", "hello"]) }),
    rubric: defineRubric([{ name: "exact", weight: overrides.weight ?? 1, fn }]),
  });
}

describe("envContentHash", () => {
  it("is sha256: and 64 hex digits, and the same for the same definition and data", async () => {
    const a = await envContentHash(echo());
    expect(a).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(await envContentHash(echo())).toBe(a);
  });

  it("changes with the data, the rubric's weights and functions, the prompt and the version", async () => {
    const base = await envContentHash(echo());
    const variants = [
      echo({ words: ["abc", "hellO"] }),
      echo({ words: ["abc"] }),
      echo({ weight: 0.5 }),
      echo({ trim: true }),
      echo({ system: "Reverse it." }),
      echo({ version: "1.0.1" }),
    ];
    const hashes = await Promise.all(variants.map(envContentHash));
    for (const h of hashes) expect(h).not.toBe(base);
    expect(new Set(hashes).size).toBe(hashes.length);
  });

  it("does not see a helper a function calls by name: that change is the author's to declare with a version", async () => {
    expect(await envContentHash(echo({ exact: (a, b) => a?.trim() === b }))).toBe(await envContentHash(echo()));
  });

  it("ignores the description and compatibleWith, which change no behaviour", async () => {
    const base = await envContentHash(echo());
    expect(await envContentHash({ ...echo(), description: "other words" })).toBe(base);
    expect(await envContentHash(echo({ compatibleWith: ["0.9.0"] }))).toBe(base);
  });

  it("counts a procedural dataset by its first tasks", async () => {
    const gen = (offset: number) =>
      singleTurnEnv({ id: "gen", version: "1", description: "", dataset: proceduralDataset((rng) => ({ prompt: String(rng.int(0, 1000) + offset), answer: "x" })), rubric: defineRubric([]) });
    expect(await envContentHash(gen(0))).toBe(await envContentHash(gen(0)));
    expect(await envContentHash(gen(1))).not.toBe(await envContentHash(gen(0)));
  });

  it("hashes a bound environment as the one it was bound from (operator services are not the environment)", async () => {
    const original = echo();
    const bound = { ...echo({ system: "changed by services" }) };
    hashAs(bound, original);
    expect(await envContentHash(bound)).toBe(await envContentHash(original));
    const registry = new EnvRegistry("node", builtinEnvs).withServices({ judges: { judges: [{ name: "j", models: ["m"], baseUrl: "http://127.0.0.1:1/v1", apiKey: "k" }], defaultJudge: "j" } as never });
    const judge = registry.get("judge-qa");
    expect(judge).toBeDefined();
    expect(await envContentHash(judge as never)).toBe(await envContentHash(builtinEnvs.find((e) => e.id === "judge-qa") as never));
  });

  it("hashes every built-in environment, each differently", async () => {
    const hashes = await Promise.all(builtinEnvs.map(envContentHash));
    expect(new Set(hashes).size).toBe(builtinEnvs.length);
  });
});

describe("normalizedSource", () => {
  it("ignores comments, whitespace, semicolons, trailing commas and quote style, and keeps the code", () => {
    const a = (x: number) => { /* why */ return [x, 'a',]; }; // trailing note
    const b = (x: number) => {
      // another comment
      return [x, "a"];
    };
    const c = (x: number) => [x + 1, "a"];
    expect(normalizedSource(a)).toBe(normalizedSource(b));
    expect(normalizedSource(c)).not.toBe(normalizedSource(b));
    expect(normalizedSource(() => "http://example.test")).toContain("http://example.test");
  });
});

describe("fingerprint", () => {
  it("cuts cycles, bounds depth and describes schemas, classes and functions", () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(fingerprint(cyclic)).toEqual({ a: 1, self: "[cycle]" });
    let deep: unknown = 0;
    for (let i = 0; i < 50; i++) deep = [deep];
    expect(JSON.stringify(fingerprint(deep))).toContain("[too deep]");
    expect(fingerprint(z.object({ n: z.number() }))).toMatchObject({ schema: { type: "object" } });
    class Thing {
      constructor(readonly n: number) {}
      twice(): number {
        return this.n * 2;
      }
    }
    expect(JSON.stringify(fingerprint(new Thing(3)))).toContain("this.n*2");
    expect(fingerprint((x: number) => x + 1)).toEqual({ fn: expect.stringContaining("x+1") });
  });
});

describe("envVersionMismatch", () => {
  const env = echo({ version: "2.0.0", compatibleWith: ["1.5.0", `sha256:${"a".repeat(64)}`] });
  const h = `sha256:${"b".repeat(64)}`;
  const other = `sha256:${"c".repeat(64)}`;
  it("lets the same version and hash through, and a row with no hash on its version", () => {
    expect(envVersionMismatch(env, h, { envVersion: "2.0.0", envHash: h }, "strict")).toBeNull();
    expect(envVersionMismatch(env, h, { envVersion: "2.0.0", envHash: null }, "strict")).toBeNull();
  });
  it("refuses another version, and (strict) the same version with another hash", () => {
    expect(envVersionMismatch(env, h, { envVersion: "1.0.0", envHash: null }, "strict")).toMatch(/started on echo 1\.0\.0; this server runs 2\.0\.0/);
    expect(envVersionMismatch(env, h, { envVersion: "2.0.0", envHash: other }, "strict")).toMatch(/same version, changed code or data/);
    expect(envVersionMismatch(env, h, { envVersion: "2.0.0", envHash: other }, "version")).toBeNull();
    expect(envVersionMismatch(env, h, { envVersion: "1.0.0", envHash: other }, "version")).not.toBeNull();
    expect(envVersionMismatch(env, h, { envVersion: "1.0.0", envHash: other }, "off")).toBeNull();
  });
  it("lets through what the environment declares compatible, by version or by hash", () => {
    expect(envVersionMismatch(env, h, { envVersion: "1.5.0", envHash: other }, "strict")).toBeNull();
    expect(envVersionMismatch(env, h, { envVersion: "0.1.0", envHash: `sha256:${"a".repeat(64)}` }, "strict")).toBeNull();
  });
});

describe("content hash of a seated environment", () => {
  it("changes with its seats (a seat's system prompt here)", async () => {
    const { ticTacToe2p } = await import("./builtin/tic-tac-toe/two-player.js");
    const before = await envContentHash(ticTacToe2p);
    const seats = ticTacToe2p.seats as NonNullable<typeof ticTacToe2p.seats>;
    const changed = { ...ticTacToe2p, seats: { ...seats, seats: seats.seats.map((s) => ({ ...s, systemPrompt: `${s.systemPrompt ?? ""} Play fast.` })) } };
    expect(await envContentHash(changed)).not.toBe(before);
  });
});
