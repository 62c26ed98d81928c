import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { HarborTaskError } from "./errors.js";
import { parseSizeToMb } from "./task-config-schema.js";
import { fieldName, loadTaskConfig, parseTaskToml, type ResolvedTaskConfig } from "./task-config.js";

const FIXTURES = fileURLToPath(new URL("../../../../test/fixtures/harbor-tasks/", import.meta.url));
const fixtureToml = (name: string): string => readFileSync(`${FIXTURES}${name}/task.toml`, "utf8");

function resolve(toml: string, hostEnv?: Record<string, string>): ResolvedTaskConfig {
  return loadTaskConfig(toml, { dirName: "my-task", instruction: "  Do the thing.\n", hostEnv }).resolved;
}

/** The HarborTaskError `fn` throws. */
function errorOf(fn: () => unknown): HarborTaskError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(HarborTaskError);
    return err as HarborTaskError;
  }
  throw new Error("expected a HarborTaskError");
}

describe("task.toml defaults", () => {
  it("an empty file gets Harbor's defaults", () => {
    expect(resolve("")).toEqual({
      name: "my-task",
      description: "",
      instruction: "Do the thing.",
      schemaVersion: "1.4",
      agentTimeoutSec: null,
      verifierTimeoutSec: 600,
      verifierUser: null,
      agentUser: null,
      verifierEnvironmentMode: "shared",
      buildTimeoutSec: 600,
      dockerImage: null,
      workdir: null,
      limits: {},
      network: { agent: { mode: "public" }, verifier: { mode: "public" } },
      env: {},
      verifierEnv: {},
      solutionEnv: {},
      healthcheck: null,
      metadata: {},
    } satisfies ResolvedTaskConfig);
  });

  it("keeps [metadata] free-form, dates as their text", () => {
    const r = resolve('[metadata]\ndifficulty = "hard"\ntags = ["a", "b"]\nnested = { x = 1 }\ncreated = 2026-11-27\n');
    expect(r.metadata).toEqual({ difficulty: "hard", tags: ["a", "b"], nested: { x: 1 }, created: "2026-11-27" });
  });

  it("takes the name from [task] when there is one", () => {
    expect(resolve('[task]\nname = "acme/fix-bug"\ndescription = "d"\n').name).toBe("acme/fix-bug");
  });

  it("fills the healthcheck's defaults", () => {
    const r = resolve('[environment.healthcheck]\ncommand = "test -f /ready"\n');
    expect(r.healthcheck).toEqual({ command: "test -f /ready", intervalSec: 5, timeoutSec: 30, startPeriodSec: 0, startIntervalSec: 5, retries: 3 });
  });

  it("keeps a numeric uid as a string, and the separate verifier mode", () => {
    const r = resolve('[agent]\nuser = 1000\n[verifier]\nuser = "tester"\nenvironment_mode = "separate"\n');
    expect([r.agentUser, r.verifierUser, r.verifierEnvironmentMode]).toEqual(["1000", "tester", "separate"]);
  });
});

describe("the fixture tasks", () => {
  it("fix-median", () => {
    const r = resolve(fixtureToml("fix-median"));
    expect(r).toMatchObject({
      name: "edgegym/fix-median",
      schemaVersion: "1.4",
      agentTimeoutSec: 600,
      verifierTimeoutSec: 120,
      buildTimeoutSec: 300,
      workdir: "/app",
      limits: { cpus: 1, memoryMb: 512 },
      network: { agent: { mode: "public" }, verifier: { mode: "public" } },
      metadata: { difficulty: "easy", category: "debugging", tags: ["python", "off-by-one", "unittest"] },
    });
  });

  it("count-errors", () => {
    expect(resolve(fixtureToml("count-errors"))).toMatchObject({ name: "edgegym/count-errors", agentTimeoutSec: 300, verifierTimeoutSec: 60, limits: { cpus: 1, memoryMb: 512 } });
  });

  it("offline-report runs with the network off in both phases", () => {
    expect(resolve(fixtureToml("offline-report")).network).toEqual({ agent: { mode: "none" }, verifier: { mode: "none" } });
  });

  it("slow-verifier: a 3 s verifier, and the agent's own network override", () => {
    const r = resolve(fixtureToml("slow-verifier"));
    expect(r.verifierTimeoutSec).toBe(3);
    expect(r.network).toEqual({ agent: { mode: "none" }, verifier: { mode: "public" } });
  });

  it("wrong-oracle: legacy version, allow_internet and memory", () => {
    const { resolved, warnings } = loadTaskConfig(fixtureToml("wrong-oracle"), { dirName: "wrong-oracle", instruction: "x" });
    expect(resolved).toMatchObject({ name: "wrong-oracle", schemaVersion: "1.0", limits: { cpus: 1, memoryMb: 512 }, network: { agent: { mode: "none" }, verifier: { mode: "none" } } });
    expect(warnings).toEqual([]);
  });

  it("no fixture has an unknown field", () => {
    for (const name of ["fix-median", "count-errors", "offline-report", "slow-verifier", "wrong-oracle"]) expect(parseTaskToml(fixtureToml(name)).warnings).toEqual([]);
  });
});

describe("deprecated fields", () => {
  it("maps memory and storage sizes to MB as Harbor does", () => {
    expect(resolve('[environment]\nmemory = "1G"\nstorage = "512M"\n').limits).toEqual({ memoryMb: 1024, storageMb: 512 });
    expect([parseSizeToMb("1.5g"), parseSizeToMb("2048K"), parseSizeToMb(" 512M "), parseSizeToMb("1T"), parseSizeToMb("12")]).toEqual([1536, 2, 512, null, null]);
  });

  it("refuses a memory that conflicts with memory_mb, and accepts one that agrees", () => {
    expect(errorOf(() => resolve('[environment]\nmemory = "1G"\nmemory_mb = 512\n')).message).toMatch(/\[environment\]\.memory: conflicts with memory_mb = 512/);
    expect(resolve('[environment]\nmemory = "1G"\nmemory_mb = 1024\n').limits.memoryMb).toBe(1024);
  });

  it("refuses a size it cannot read", () => {
    const err = errorOf(() => resolve('[environment]\nstorage = "lots"\n'));
    expect(err.field).toBe("[environment].storage");
    expect(err.message).toMatch(/"lots" is not a size/);
  });

  it("allow_internet = false means no network unless network_mode is set", () => {
    expect(resolve("[environment]\nallow_internet = false\n").network.agent).toEqual({ mode: "none" });
    expect(resolve("[environment]\nallow_internet = true\n").network.agent).toEqual({ mode: "public" });
    expect(resolve('[environment]\nallow_internet = false\nnetwork_mode = "public"\n').network.agent).toEqual({ mode: "public" });
  });

  it("a legacy top-level version is the schema version, unless schema_version is given too", () => {
    expect(resolve('version = "1.0"\n').schemaVersion).toBe("1.0");
    expect(resolve('version = "1.0"\nschema_version = "1.4"\n').schemaVersion).toBe("1.4");
  });
});

describe("network", () => {
  it("an allowlist, normalised, for both phases", () => {
    const r = resolve('[environment]\nnetwork_mode = "allowlist"\nallowed_hosts = [" PyPI.org. ", "*.github.com", "10.0.0.0/8", "pypi.org", "2001:db8::1"]\n');
    const hosts = ["pypi.org", "*.github.com", "10.0.0.0/8", "2001:db8::1"];
    expect(r.network).toEqual({ agent: { mode: "allowlist", hosts }, verifier: { mode: "allowlist", hosts } });
  });

  it("per-phase overrides beat the baseline", () => {
    const r = resolve('[environment]\nnetwork_mode = "no-network"\n[agent]\nnetwork_mode = "allowlist"\nallowed_hosts = ["api.example.com"]\n[verifier]\nnetwork_mode = "public"\n');
    expect(r.network).toEqual({ agent: { mode: "allowlist", hosts: ["api.example.com"] }, verifier: { mode: "public" } });
  });

  it("an empty allowlist reaches nothing", () => {
    expect(resolve('[environment]\nnetwork_mode = "allowlist"\n').network.agent).toEqual({ mode: "allowlist", hosts: [] });
  });

  it("allowed_hosts without network_mode = allowlist is an error, as in Harbor", () => {
    const err = errorOf(() => resolve('[agent]\nallowed_hosts = ["pypi.org"]\n'));
    expect(err.field).toBe("[agent].allowed_hosts");
    expect(err.message).toMatch(/only valid with network_mode = "allowlist"/);
  });

  it("refuses URLs, ports and paths in allowed_hosts", () => {
    for (const bad of ["https://pypi.org", "pypi.org:443", "pypi.org/simple", "*", "a.*.com", "*.10.0.0.1", ""]) {
      const err = errorOf(() => resolve(`[environment]\nnetwork_mode = "allowlist"\nallowed_hosts = ["${bad}"]\n`));
      expect(err.field).toBe("[environment].allowed_hosts");
    }
  });

  it("refuses an unknown network mode with the modes it accepts", () => {
    expect(errorOf(() => resolve('[environment]\nnetwork_mode = "offline"\n')).message).toMatch(/\[environment\]\.network_mode: expected "public", "no-network" or "allowlist" \(got "offline"\)/);
  });
});

describe("environment templates", () => {
  it("expand from the host map, literals pass through, defaults apply", () => {
    const r = resolve('[environment.env]\nLANG = "C.UTF-8"\nMODE = "${MODE:-fast}"\n[verifier.env]\nJUDGE = "${JUDGE_MODEL}"\n[solution.env]\nEMPTY = "${NOPE:-}"\n', { JUDGE_MODEL: "small" });
    expect([r.env, r.verifierEnv, r.solutionEnv]).toEqual([{ LANG: "C.UTF-8", MODE: "fast" }, { JUDGE: "small" }, { EMPTY: "" }]);
  });

  it("with the default empty host map, a template without a default is a load error naming the variable", () => {
    const err = errorOf(() => resolve('[verifier.env]\nKEY = "${OPENAI_API_KEY}"\n'));
    expect(err.field).toBe("[verifier].env.KEY");
    expect(err.message).toMatch(/needs the host variable OPENAI_API_KEY/);
  });
});

describe("errors name the file and the field", () => {
  const at = (toml: string) => errorOf(() => parseTaskToml(toml, "tasks/t/task.toml"));

  it("bad types", () => {
    const err = at('[environment]\ncpus = "2"\n');
    expect(err.code).toBe("invalid_task");
    expect(err.file).toBe("tasks/t/task.toml");
    expect(err.field).toBe("[environment].cpus");
    expect(err.message).toBe('tasks/t/task.toml: [environment].cpus: expected a whole number of CPUs (got "2")');
  });

  it("fractions, zero and negative values", () => {
    expect(at("[environment]\ncpus = 0.5\n").message).toMatch(/\[environment\]\.cpus: expected a whole number of CPUs \(got 0.5\)/);
    expect(at("[environment]\nmemory_mb = 0\n").message).toMatch(/memory_mb: must be at least 1 MB/);
    expect(at("[verifier]\ntimeout_sec = -1\n").message).toMatch(/\[verifier\]\.timeout_sec: must be > 0 seconds \(got -1\)/);
    expect(at("[agent]\ntimeout_sec = 0\n").field).toBe("[agent].timeout_sec");
  });

  it("several problems at once", () => {
    expect(at('[verifier]\ntimeout_sec = "long"\n[environment]\ngpus = -1\n').message).toMatch(/\[verifier\]\.timeout_sec: .*; \[environment\]\.gpus: /);
  });

  it("env values must be strings", () => {
    expect(at("[verifier.env]\nRETRIES = 3\n").field).toBe("[verifier].env.RETRIES");
  });

  it("a bad [task].name", () => {
    expect(at('[task]\nname = "no-slash"\n').message).toMatch(/\[task\]\.name: must be "org\/name"/);
    expect(at('[task]\nname = "a/b..c"\n').message).toMatch(/must not contain "\.\."/);
  });

  it("invalid TOML, with where", () => {
    expect(at("[environment\ncpus = 1\n").message).toMatch(/^tasks\/t\/task\.toml: not valid TOML at line 1, column \d+: /);
  });

  it("unsupported Harbor features, refused with why", () => {
    expect(at('[[steps]]\nname = "one"\n').field).toBe("[[steps]]");
    expect(at('[environment]\nos = "Windows"\n').message).toMatch(/Linux containers only/);
    expect(at("[environment]\ngpus = 1\n").message).toMatch(/no GPU/);
    expect(at('[[environment.mcp_servers]]\nname = "x"\nurl = "http://x"\n').field).toBe("[environment].mcp_servers");
    expect(at('[verifier.environment]\ndocker_image = "x"\n').field).toBe("[verifier.environment]");
    expect(at('[[verifier.collect]]\ncommand = "true"\n').field).toBe("[[verifier.collect]]");
  });

  it("unknown keys are warnings, as Harbor ignores them", () => {
    const { warnings } = parseTaskToml('extra = 1\n[environment]\ncpu = 2\n[verifier]\ntimeout_secs = 5\n[metadata]\nanything = "goes"\n', "t.toml");
    expect([...warnings].sort()).toEqual([
      "t.toml: [environment].cpu is not a Harbor task.toml field; ignored",
      "t.toml: [verifier].timeout_secs is not a Harbor task.toml field; ignored",
      "t.toml: extra is not a Harbor task.toml field; ignored",
    ]);
  });

  it("formats field paths as task.toml readers write them", () => {
    expect([fieldName(["environment", "cpus"]), fieldName(["task", "authors", 1, "name"]), fieldName(["schema_version"]), fieldName([])]).toEqual([
      "[environment].cpus",
      "[task].authors[1].name",
      "schema_version",
      "(file)",
    ]);
  });
});
