import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { serverConfigFromVars } from "../config-vars.js";
import { loadServerConfig } from "./config.js";

describe("loadServerConfig", () => {
  it("reads variables, then the config file, and merges API keys from both", () => {
    const dir = mkdtempSync(join(tmpdir(), "edgegym-config-"));
    const file = join(dir, "edgegym.json");
    writeFileSync(file, JSON.stringify({ api_keys: ["sk-file"], default_ttl_seconds: 120, body_limit_bytes: 2048 }));
    const config = loadServerConfig({ EDGEGYM_API_KEYS: "sk-env, sk-file", EDGEGYM_TTL_SECONDS: "60" }, file);
    expect(config).toEqual({ apiKeys: ["sk-env", "sk-file"], defaultTtlSeconds: 60, bodyLimitBytes: 2048 });
  });

  it("says which setting is wrong", () => {
    expect(() => loadServerConfig({ EDGEGYM_TTL_SECONDS: "soon" })).toThrow(/EDGEGYM_TTL_SECONDS must be a positive integer/);
    const dir = mkdtempSync(join(tmpdir(), "edgegym-config-"));
    const file = join(dir, "bad.json");
    writeFileSync(file, JSON.stringify({ api_keyz: [] }));
    expect(() => loadServerConfig({}, file)).toThrow(/bad.json/);
  });

  it("reads the eval retention in days from EDGEGYM_EVAL_RETENTION_DAYS or eval_retention_days; unset keeps jobs forever", () => {
    const dir = mkdtempSync(join(tmpdir(), "edgegym-config-"));
    const file = join(dir, "edgegym.json");
    writeFileSync(file, JSON.stringify({ eval_retention_days: 30 }));
    expect(loadServerConfig({}, file).evalRetentionDays).toBe(30);
    expect(loadServerConfig({ EDGEGYM_EVAL_RETENTION_DAYS: "7" }, file).evalRetentionDays).toBe(7);
    expect(loadServerConfig({}).evalRetentionDays).toBeUndefined();
    expect(() => loadServerConfig({ EDGEGYM_EVAL_RETENTION_DAYS: "0" })).toThrow(/EDGEGYM_EVAL_RETENTION_DAYS must be a positive integer/);
    expect(serverConfigFromVars({ EDGEGYM_EVAL_RETENTION_DAYS: "14" }).evalRetentionDays).toBe(14);
    expect(serverConfigFromVars({}).evalRetentionDays).toBeUndefined();
  });

  it("opts in to a weak python sandbox only when told: python_allow_weak_sandbox or EDGEGYM_PYTHON_ALLOW_WEAK_SANDBOX", () => {
    const dir = mkdtempSync(join(tmpdir(), "edgegym-config-"));
    const file = join(dir, "edgegym.json");
    writeFileSync(file, JSON.stringify({ python_allow_weak_sandbox: true }));
    expect(loadServerConfig({}, file).pythonAllowWeakSandbox).toBe(true);
    expect(loadServerConfig({ EDGEGYM_PYTHON_ALLOW_WEAK_SANDBOX: "0" }, file).pythonAllowWeakSandbox).toBe(false);
    expect(loadServerConfig({ EDGEGYM_PYTHON_ALLOW_WEAK_SANDBOX: "1" }).pythonAllowWeakSandbox).toBe(true);
    expect(loadServerConfig({}).pythonAllowWeakSandbox).toBeUndefined();
    expect(() => loadServerConfig({ EDGEGYM_PYTHON_ALLOW_WEAK_SANDBOX: "yes" })).toThrow(/EDGEGYM_PYTHON_ALLOW_WEAK_SANDBOX must be/);
  });

  it("is open (no keys) by default", () => {
    expect(loadServerConfig({})).toEqual({ apiKeys: [] });
  });
});
