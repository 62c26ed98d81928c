import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ALL_SETTINGS } from "./settings.js";
import { configurationDoc, settingsUsage } from "./settings-doc.js";

describe("the settings table", () => {
  it("docs/configuration.md is generated from it and current (npm run docs:config)", () => {
    expect(readFileSync(new URL("../../docs/configuration.md", import.meta.url), "utf8")).toBe(configurationDoc());
  });

  it("the usage text names every variable, EDGEGYM_WORKERS included", () => {
    const usage = settingsUsage();
    for (const row of ALL_SETTINGS) if (!row.variable.startsWith("(")) expect(usage).toContain(row.variable);
    expect(usage).toContain("--workers / EDGEGYM_WORKERS");
  });

  it("declares each variable and config key once, with a doc", () => {
    const variables = ALL_SETTINGS.map((row) => row.variable);
    expect(new Set(variables).size).toBe(variables.length);
    const keys = ALL_SETTINGS.flatMap((row) => (row.fileKey ? [row.fileKey] : []));
    expect(new Set(keys).size).toBe(keys.length);
    for (const row of ALL_SETTINGS) expect(row.doc.length).toBeGreaterThan(5);
  });
});
