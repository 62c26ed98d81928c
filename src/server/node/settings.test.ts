import { describe, expect, it } from "vitest";
import { readServeSettings } from "./settings.js";

describe("readServeSettings", () => {
  it("takes flags over variables over the table's defaults", () => {
    expect(readServeSettings({}, {})).toEqual({ port: 8787, host: "127.0.0.1", dbPath: ".edgegym/edgegym.db", synchronous: "NORMAL", pgPoolSize: 10, configPath: undefined, workers: 1, reapIntervalMs: 60_000 });
    const env = { PORT: "9000", HOST: "0.0.0.0", EDGEGYM_WORKERS: "3", EDGEGYM_REAP_INTERVAL_SECONDS: "5", EDGEGYM_DB: "a.db" };
    expect(readServeSettings({ port: "9001", workers: "2" }, env)).toMatchObject({ port: 9001, host: "0.0.0.0", dbPath: "a.db", workers: 2, reapIntervalMs: 5000 });
    expect(readServeSettings({ workers: "auto" }, {}).workers).toBeGreaterThanOrEqual(1);
  });

  it("stops at start on a value that does not parse, naming the setting (a non-numeric reap interval used to turn the reaper off)", () => {
    expect(() => readServeSettings({}, { EDGEGYM_REAP_INTERVAL_SECONDS: "soon" })).toThrow(/EDGEGYM_REAP_INTERVAL_SECONDS must be a whole number of seconds \(0 turns the reaper off\), got "soon"/);
    expect(() => readServeSettings({}, { EDGEGYM_REAP_INTERVAL_SECONDS: "-5" })).toThrow(/EDGEGYM_REAP_INTERVAL_SECONDS/);
    expect(readServeSettings({}, { EDGEGYM_REAP_INTERVAL_SECONDS: "0" }).reapIntervalMs).toBe(0);
    expect(() => readServeSettings({ workers: "many" }, {})).toThrow(/EDGEGYM_WORKERS must be a positive integer or "auto"/);
    expect(() => readServeSettings({ port: "80a" }, {})).toThrow(/PORT must be a port number/);
    expect(readServeSettings({}, { EDGEGYM_PG_POOL_SIZE: "32" }).pgPoolSize).toBe(32);
    expect(() => readServeSettings({}, { EDGEGYM_PG_POOL_SIZE: "0" })).toThrow(/EDGEGYM_PG_POOL_SIZE must be a positive integer/);
    expect(() => readServeSettings({}, { EDGEGYM_PG_POOL_SIZE: "5000" })).toThrow(/EDGEGYM_PG_POOL_SIZE must be at most 1000/);
    expect(() => readServeSettings({}, { PORT: "70000" })).toThrow(/PORT must be a port number/);
  });
});
