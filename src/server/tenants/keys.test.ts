import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createApp } from "../app.js";
import { serverConfigFromVars } from "../config-vars.js";
import { DEFAULT_CONFIG } from "../context.js";
import { loadServerConfig } from "../node/config.js";
import { openNodeDatabase } from "../db/node-sqlite.js";
import { EnvRegistry, builtinEnvs } from "../../envs/index.js";
import { buildKeyTable, deriveTenantName, parseKeyEntries, parseKeyEntry } from "./keys.js";
import { quotasFromSettings } from "./quota-config.js";

const where = { tenant: "EDGEGYM_API_KEYS", admin: "EDGEGYM_ADMIN_API_KEYS" };

describe("key entries", () => {
  it("reads name:key and a bare key (named later from its hash)", () => {
    expect(parseKeyEntry("alice:sk-a", "X")).toEqual({ name: "alice", key: "sk-a" });
    expect(parseKeyEntry("  team.ml-2:sk:with:colons ", "X")).toEqual({ name: "team.ml-2", key: "sk:with:colons" });
    expect(parseKeyEntry("sk-bare", "X")).toEqual({ name: null, key: "sk-bare" });
  });

  it("refuses what it would have to guess at, naming the setting and never echoing the key", () => {
    expect(() => parseKeyEntry("alice:", "EDGEGYM_API_KEYS")).toThrow(/EDGEGYM_API_KEYS: tenant "alice" has an empty key/);
    expect(() => parseKeyEntry(":sk-secret", "EDGEGYM_API_KEYS")).toThrow(/is not a tenant name/);
    expect(() => parseKeyEntry("has space:sk-secret", "X")).toThrow(/"has space" is not a tenant name.*name:key/);
    expect(() => parseKeyEntry("public:sk-secret", "X")).toThrow(/"public" is reserved/);
    expect(() => parseKeyEntry(`${"n".repeat(65)}:sk-secret`, "X")).toThrow(/not a tenant name/);
    for (const bad of [":sk-secret", "has space:sk-secret", "public:sk-secret"]) {
      expect(() => parseKeyEntry(bad, "X")).toThrow(expect.not.objectContaining({ message: expect.stringContaining("sk-secret") }));
    }
  });

  it("lets several keys share a name (rotation) but not one key carry two names or roles", () => {
    expect(parseKeyEntries(["alice:sk-old", "alice:sk-new"], [], where).tenant).toHaveLength(2);
    expect(() => parseKeyEntries(["alice:sk-x", "bob:sk-x"], [], where)).toThrow(/EDGEGYM_API_KEYS: the same key is listed twice/);
    expect(() => parseKeyEntries(["alice:sk-x"], ["alice:sk-x"], where)).toThrow(/EDGEGYM_ADMIN_API_KEYS: the same key/);
  });

  it("names a bare key key_ + 12 hex digits of SHA-256: stable, not the key", async () => {
    const name = await deriveTenantName("sk-bare");
    expect(name).toMatch(/^key_[0-9a-f]{12}$/);
    expect(await deriveTenantName("sk-bare")).toBe(name);
    expect(await deriveTenantName("sk-bare2")).not.toBe(name);
    const table = await buildKeyTable(parseKeyEntries(["sk-bare", "alice:sk-a"], ["ops:sk-o"], where));
    expect(table.map((e) => e.tenant)).toEqual([
      { name, admin: false },
      { name: "alice", admin: false },
      { name: "ops", admin: true },
    ]);
  });

  it("stops the app at build time on a bad entry (the Worker answers 500 with the message)", () => {
    const database = openNodeDatabase(":memory:");
    expect(() => createApp({ db: database.db, registry: new EnvRegistry("node", builtinEnvs), config: { apiKeys: ["bad name:sk"] } })).toThrow(/not a tenant name/);
    database.close();
  });
});

describe("tenancy settings", () => {
  it("reads admin keys and quotas from variables and the config file; a variable wins", () => {
    const dir = mkdtempSync(join(tmpdir(), "edgegym-tenants-"));
    const file = join(dir, "edgegym.json");
    writeFileSync(file, JSON.stringify({ api_keys: ["alice:sk-a"], admin_api_keys: ["ops:sk-o"], quotas: { open_episodes: 100, event_streams: "off", reset_burst: 50 } }));
    const config = loadServerConfig({ EDGEGYM_ADMIN_API_KEYS: "sk-root", EDGEGYM_QUOTA_OPEN_EPISODES: "7", EDGEGYM_QUOTA_RESETS_PER_SECOND: "off" }, file);
    expect(config.apiKeys).toEqual(["alice:sk-a"]);
    expect(config.adminApiKeys).toEqual(["sk-root", "ops:sk-o"]);
    expect(config.quotas).toEqual({ ...DEFAULT_CONFIG.quotas, maxOpenEpisodes: 7, resetsPerSecond: null, resetBurst: 50, maxEventStreams: null });
  });

  it("leaves the defaults alone when nothing is set, and the Worker reads the same variables", () => {
    expect(loadServerConfig({})).toEqual({ apiKeys: [] });
    expect(quotasFromSettings({})).toBeUndefined();
    expect(serverConfigFromVars({ EDGEGYM_ADMIN_API_KEYS: "ops:sk-o", EDGEGYM_QUOTA_STORED_BYTES: "1000000" })).toMatchObject({
      adminApiKeys: ["ops:sk-o"],
      quotas: { ...DEFAULT_CONFIG.quotas, maxStoredBytes: 1_000_000 },
    });
  });

  it("says which quota setting is wrong and how to fix it", () => {
    expect(() => quotasFromSettings({ EDGEGYM_QUOTA_EVENT_STREAMS: "0" })).toThrow(/EDGEGYM_QUOTA_EVENT_STREAMS must be a positive integer or "off", got "0"/);
    expect(() => quotasFromSettings({ EDGEGYM_QUOTA_RESET_BURST: "off" })).toThrow(/cannot be "off".*resets_per_second/);
    const dir = mkdtempSync(join(tmpdir(), "edgegym-tenants-"));
    const file = join(dir, "bad.json");
    writeFileSync(file, JSON.stringify({ quotas: { open_episode: 5 } }));
    expect(() => loadServerConfig({}, file)).toThrow(/bad.json: quotas/);
  });
});
