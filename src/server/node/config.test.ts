import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { serverConfigFromVars } from "../config-vars.js";
import { DEFAULT_CONFIG } from "../context.js";
import { loadEnvSpecs, loadMathDatasetConfig, loadServerConfig } from "./config.js";
import { splitEnvSpecs } from "../../envs/load-env-modules.node.js";

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

  it("reads the version check from EDGEGYM_ENV_VERSION_CHECK or env_version_check (strict by default) and names the variable when it is wrong", () => {
    const dir = mkdtempSync(join(tmpdir(), "edgegym-config-"));
    const file = join(dir, "edgegym.json");
    writeFileSync(file, JSON.stringify({ env_version_check: "version" }));
    expect(loadServerConfig({}, file).envVersionCheck).toBe("version");
    expect(loadServerConfig({ EDGEGYM_ENV_VERSION_CHECK: "off" }, file).envVersionCheck).toBe("off");
    expect(serverConfigFromVars({}).envVersionCheck).toBeUndefined();
    expect(DEFAULT_CONFIG.envVersionCheck).toBe("strict");
    expect(() => serverConfigFromVars({ EDGEGYM_ENV_VERSION_CHECK: "loose" })).toThrow(/EDGEGYM_ENV_VERSION_CHECK must be strict, version or off, got "loose"/);
    writeFileSync(file, JSON.stringify({ env_version_check: "loose" }));
    expect(() => loadServerConfig({}, file)).toThrow(/env_version_check/);
  });

  it("reads the eval job size cap from EDGEGYM_EVAL_MAX_ROLLOUTS or eval_max_rollouts; unset keeps the default of 100,000", () => {
    const dir = mkdtempSync(join(tmpdir(), "edgegym-config-"));
    const file = join(dir, "edgegym.json");
    writeFileSync(file, JSON.stringify({ eval_max_rollouts: 5000 }));
    expect(loadServerConfig({}, file).evalMaxRollouts).toBe(5000);
    expect(loadServerConfig({ EDGEGYM_EVAL_MAX_ROLLOUTS: "20" }, file).evalMaxRollouts).toBe(20);
    expect(loadServerConfig({}).evalMaxRollouts).toBeUndefined();
    expect(DEFAULT_CONFIG.evalMaxRollouts).toBe(100_000);
    expect(() => loadServerConfig({ EDGEGYM_EVAL_MAX_ROLLOUTS: "-1" })).toThrow(/EDGEGYM_EVAL_MAX_ROLLOUTS must be a positive integer/);
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

describe("judges", () => {
  const fileWith = (content: unknown): string => {
    const file = join(mkdtempSync(join(tmpdir(), "edgegym-config-")), "edgegym.json");
    writeFileSync(file, JSON.stringify(content));
    return file;
  };

  it("builds the default judge from EDGEGYM_JUDGE_*, on Node and on a Worker", () => {
    const vars = { EDGEGYM_JUDGE_BASE_URL: "http://judge.internal/v1", EDGEGYM_JUDGE_MODEL: "qwen, llama", EDGEGYM_JUDGE_API_KEY: "sk-j" };
    const expected = { judges: [{ name: "default", baseURL: "http://judge.internal/v1", models: ["qwen", "llama"], apiKey: "sk-j" }], defaultJudge: "default" };
    expect(loadServerConfig(vars).judges).toEqual(expected);
    expect(serverConfigFromVars(vars).judges).toEqual(expected);
    expect(loadServerConfig({}).judges).toBeUndefined();
  });

  it("reads named judges from the config file and EDGEGYM_JUDGES, keys from the variables they name", () => {
    const file = fileWith({
      judges: { gpt: { base_url: "https://api.openai.com/v1", models: ["gpt-4.1-mini", "gpt-4.1"], api_key_env: "OPENAI_API_KEY" } },
      default_judge: "gpt",
    });
    const config = loadServerConfig({ OPENAI_API_KEY: "sk-o", EDGEGYM_JUDGES: JSON.stringify({ local: { base_url: "http://127.0.0.1:8000/v1", model: "qwen" } }) }, file);
    expect(config.judges).toEqual({
      judges: [
        { name: "gpt", baseURL: "https://api.openai.com/v1", models: ["gpt-4.1-mini", "gpt-4.1"], apiKey: "sk-o" },
        { name: "local", baseURL: "http://127.0.0.1:8000/v1", models: ["qwen"], apiKey: undefined },
      ],
      defaultJudge: "gpt",
    });
    const worker = serverConfigFromVars({ EDGEGYM_JUDGES: JSON.stringify({ gpt: { base_url: "https://api.openai.com/v1", model: "gpt-4.1-mini", api_key_env: "JUDGE_KEY" } }), JUDGE_KEY: "sk-w" } as never);
    expect(worker.judges).toEqual({ judges: [{ name: "gpt", baseURL: "https://api.openai.com/v1", models: ["gpt-4.1-mini"], apiKey: "sk-w" }], defaultJudge: "gpt" });
  });

  it("says which judge setting is wrong", () => {
    expect(() => loadServerConfig({ EDGEGYM_JUDGE_BASE_URL: "http://j/v1" })).toThrow(/set both EDGEGYM_JUDGE_BASE_URL and EDGEGYM_JUDGE_MODEL/);
    expect(() => loadServerConfig({}, fileWith({ judges: { g: { base_url: "http://j/v1", model: "m", api_key_env: "NOPE" } } }))).toThrow(/judge "g": api_key_env names NOPE, which is not set/);
    expect(() => loadServerConfig({}, fileWith({ judges: { g: { base_url: "http://j/v1", model: "m" } }, default_judge: "h" }))).toThrow(/default judge "h" .* not among the configured judges: g/);
    expect(() => loadServerConfig({}, fileWith({ judges: { g: { base_url: "http://j/v1", model: "m", api_key: "sk-inline" } } }))).toThrow(/edgegym.json/);
    expect(() => loadServerConfig({ EDGEGYM_JUDGES: "{" })).toThrow(/EDGEGYM_JUDGES must be a JSON object/);
  });

  it("reads the eval max_tokens cap from EDGEGYM_EVAL_MAX_TOKENS or eval_max_tokens", () => {
    expect(loadServerConfig({}, fileWith({ eval_max_tokens: 512 })).evalMaxTokens).toBe(512);
    expect(loadServerConfig({ EDGEGYM_EVAL_MAX_TOKENS: "256" }, fileWith({ eval_max_tokens: 512 })).evalMaxTokens).toBe(256);
    expect(serverConfigFromVars({ EDGEGYM_EVAL_MAX_TOKENS: "128" }).evalMaxTokens).toBe(128);
    expect(() => loadServerConfig({ EDGEGYM_EVAL_MAX_TOKENS: "lots" })).toThrow(/EDGEGYM_EVAL_MAX_TOKENS must be a positive integer/);
  });
});

describe("loadMathDatasetConfig", () => {
  it("reads EDGEGYM_MATH_DATASET as a source or as JSON settings, else the file's math_dataset, else nothing", () => {
    expect(loadMathDatasetConfig({ EDGEGYM_MATH_DATASET: "./gsm8k.parquet" })).toEqual({ source: "./gsm8k.parquet" });
    expect(loadMathDatasetConfig({ EDGEGYM_MATH_DATASET: '{"source":"https://h/m.jsonl","precision":4}' })).toEqual({ source: "https://h/m.jsonl", precision: 4 });
    const dir = mkdtempSync(join(tmpdir(), "edgegym-config-"));
    const file = join(dir, "edgegym.json");
    writeFileSync(file, JSON.stringify({ math_dataset: { source: { train: "a.jsonl", eval: "b.jsonl" }, id: "gsm8k" } }));
    expect(loadMathDatasetConfig({}, file)).toEqual({ source: { train: "a.jsonl", eval: "b.jsonl" }, id: "gsm8k" });
    expect(loadServerConfig({}, file)).toEqual({ apiKeys: [] }); // the server's own settings ignore it
    expect(loadMathDatasetConfig({})).toBeUndefined();
  });

  it("says which setting is wrong", () => {
    expect(() => loadMathDatasetConfig({ EDGEGYM_MATH_DATASET: '{"source":"x.jsonl","colums":{}}' })).toThrow(/EDGEGYM_MATH_DATASET: .*colums/);
    expect(() => loadMathDatasetConfig({ EDGEGYM_MATH_DATASET: '{"source":"x.jsonl","precision":99}' })).toThrow(/EDGEGYM_MATH_DATASET: precision/);
  });
});


describe("loadEnvSpecs", () => {
  it("takes the --env flags, else the config file's envs with relative paths resolved against the file's directory", () => {
    const dir = mkdtempSync(join(tmpdir(), "edgegym-config-"));
    const file = join(dir, "edgegym.json");
    writeFileSync(file, JSON.stringify({ envs: ["harbor:tasks", "harbor:/srv/tasks", "./envs/mine.js", "../other.js", "@acme/edgegym-env"] }));
    const fromFile = [`harbor:${join(dir, "tasks")}`, "harbor:/srv/tasks", join(dir, "envs/mine.js"), join(dir, "../other.js"), "@acme/edgegym-env"];
    expect(loadEnvSpecs(undefined, {}, file)).toEqual(fromFile);
    expect(loadEnvSpecs([], { EDGEGYM_CONFIG: file })).toEqual(fromFile);
    // Flags win, as every flag does over the file: they replace its list, and stay relative to the working directory.
    expect(loadEnvSpecs(["harbor:./here"], {}, file)).toEqual(["harbor:./here"]);
    expect(loadEnvSpecs(undefined, {})).toEqual([]);
    expect(splitEnvSpecs(fromFile)).toEqual({ harborDirs: [join(dir, "tasks"), "/srv/tasks"], modules: fromFile.slice(2) });
  });

  it("says what is wrong: a list of non-empty strings, and harbor: needs its directory", () => {
    const dir = mkdtempSync(join(tmpdir(), "edgegym-config-"));
    const file = join(dir, "edgegym.json");
    writeFileSync(file, JSON.stringify({ envs: "harbor:tasks" }));
    expect(() => loadEnvSpecs(undefined, {}, file)).toThrow(/edgegym\.json: envs: /);
    expect(() => splitEnvSpecs(["harbor:"])).toThrow(/--env harbor:DIR/);
  });
});
