import { describe, expect, it } from "vitest";
import { ALL_SETTINGS } from "../settings.js";
import { wrapText } from "../text-wrap.js";
import { USAGE } from "./usage.js";

describe("edgegym serve --help", () => {
  it("fits 80 columns and still names every command and variable", () => {
    for (const line of USAGE.split("\n")) expect(line.length, line).toBeLessThanOrEqual(80);
    for (const command of ["serve", "eval", "export-sft", "generate", "init", "rescore", "view"]) expect(USAGE).toContain(`edgegym ${command} `);
    for (const row of ALL_SETTINGS) if (!row.variable.startsWith("(")) expect(USAGE).toContain(row.variable);
    expect(USAGE).toContain("--allow-weak-python-sandbox / EDGEGYM_PYTHON_ALLOW_WEAK_SANDBOX");
  });
});

describe("wrapText", () => {
  it("wraps at word boundaries under a deeper indent and keeps every word", () => {
    const line = `  ${"word ".repeat(40).trim()}`;
    const wrapped = wrapText(line, 30).split("\n");
    expect(wrapped.length).toBeGreaterThan(1);
    expect(wrapped[0]?.startsWith("  word")).toBe(true);
    for (const l of wrapped.slice(1)) expect(l.startsWith("      word")).toBe(true);
    for (const l of wrapped) expect(l.length).toBeLessThanOrEqual(30);
    expect(wrapped.join(" ").split(/\s+/).filter(Boolean)).toEqual(line.trim().split(" "));
    expect(wrapText("short\n\n  kept", 30)).toBe("short\n\n  kept");
    expect(wrapText(`  ${"x".repeat(50)} y`, 30)).toBe(`  ${"x".repeat(50)}\n      y`);
  });
});
