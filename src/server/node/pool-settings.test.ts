import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../context.js";
import { loadServerConfig } from "./config.js";
import { pythonSandboxOptions } from "./serve.js";

describe("the python sandbox's pool and the scoring budget in the settings table", () => {
  it("reads EDGEGYM_PYTHON_WORKERS / python_workers and EDGEGYM_PYTHON_SPARES / python_spares into the sandbox edgegym serve starts", () => {
    expect(pythonSandboxOptions(DEFAULT_CONFIG)).toEqual({ allowWeakIsolation: false, workers: 1, spares: 1 });
    const fromVars = loadServerConfig({ EDGEGYM_PYTHON_WORKERS: "4", EDGEGYM_PYTHON_SPARES: "0" });
    expect(pythonSandboxOptions({ ...DEFAULT_CONFIG, ...fromVars })).toEqual({ allowWeakIsolation: false, workers: 4, spares: 0 });
    const file = join(mkdtempSync(join(tmpdir(), "edgegym-pool-")), "edgegym.json");
    writeFileSync(file, JSON.stringify({ python_workers: 2, python_spares: 3, python_allow_weak_sandbox: true }));
    expect(pythonSandboxOptions({ ...DEFAULT_CONFIG, ...loadServerConfig({}, file) })).toEqual({ allowWeakIsolation: true, workers: 2, spares: 3 });
  });

  it("reads the scoring budget from EDGEGYM_SCORE_TIMEOUT_SECONDS / score_timeout_seconds (120 s by default)", () => {
    expect(DEFAULT_CONFIG.scoreTimeoutMs).toBe(120_000);
    expect(loadServerConfig({ EDGEGYM_SCORE_TIMEOUT_SECONDS: "5" }).scoreTimeoutMs).toBe(5_000);
    const file = join(mkdtempSync(join(tmpdir(), "edgegym-pool-")), "edgegym.json");
    writeFileSync(file, JSON.stringify({ score_timeout_seconds: 30 }));
    expect(loadServerConfig({}, file).scoreTimeoutMs).toBe(30_000);
  });

  it("names the setting a bad value is for", () => {
    expect(() => loadServerConfig({ EDGEGYM_PYTHON_WORKERS: "0" })).toThrow(/EDGEGYM_PYTHON_WORKERS must be a positive integer, got "0"/);
    expect(() => loadServerConfig({ EDGEGYM_PYTHON_SPARES: "-1" })).toThrow(/EDGEGYM_PYTHON_SPARES must be a whole number from 0 to 64/);
    expect(() => loadServerConfig({ EDGEGYM_SCORE_TIMEOUT_SECONDS: "forever" })).toThrow(/EDGEGYM_SCORE_TIMEOUT_SECONDS must be a positive integer/);
  });
});
