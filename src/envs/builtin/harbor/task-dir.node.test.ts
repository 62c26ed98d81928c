import { chmod, cp, mkdir, mkdtemp, rm, symlink, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HarborTaskError } from "./errors.js";
import { loadHarborTask, loadHarborTasks } from "./task-dir.node.js";

const FIXTURES = fileURLToPath(new URL("../../../../test/fixtures/harbor-tasks", import.meta.url));
const SHA = /^sha256:[0-9a-f]{64}$/;

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "edgegym-harbor-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

let copies = 0;
/** A fresh copy of a fixture task (or of the whole fixtures root) to change. */
async function copyOf(name?: string): Promise<string> {
  const dest = join(scratch, `copy-${++copies}`, name ?? "");
  await cp(name ? join(FIXTURES, name) : FIXTURES, dest, { recursive: true });
  return dest;
}

async function loadError(promise: Promise<unknown>): Promise<HarborTaskError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(HarborTaskError);
  return err as HarborTaskError;
}

describe("loadHarborTasks on the fixtures", () => {
  it("loads the five tasks, sorted by name, with nothing to warn about", async () => {
    const { tasks, warnings } = await loadHarborTasks(FIXTURES);
    expect(tasks.map((t) => t.name)).toEqual(["edgegym/count-errors", "edgegym/fix-median", "edgegym/offline-report", "edgegym/slow-verifier", "wrong-oracle"]);
    expect(warnings).toEqual([]);
  });

  it("returns tests and solution files with their modes, and the instruction", async () => {
    const task = await loadHarborTask(join(FIXTURES, "fix-median"));
    expect(task.tests.map((f) => f.relativePath)).toEqual(["run_tests.py", "test.sh", "test_stats.py"]);
    const testSh = task.tests.find((f) => f.relativePath === "test.sh");
    expect((testSh?.mode ?? 0) & 0o100).toBe(0o100);
    expect(new TextDecoder().decode(testSh?.bytes)).toMatch(/^#!\/bin\/bash/);
    expect(task.solution?.map((f) => f.relativePath)).toEqual(["solve.sh"]);
    expect(task.config.instruction).toMatch(/^# Fix the median/);
    expect(task.environmentDir).toBe(join(task.dir, "environment"));
  });

  it("hashes are stable across calls and locations, and differ between tasks", async () => {
    const first = await loadHarborTasks(FIXTURES);
    const second = await loadHarborTasks(FIXTURES);
    const elsewhere = await loadHarborTasks(await copyOf());
    const hashes = (set: typeof first) => set.tasks.map((t) => [t.environmentHash, t.testsHash, t.solutionHash]);
    expect(hashes(second)).toEqual(hashes(first));
    expect(hashes(elsewhere)).toEqual(hashes(first));
    for (const [env, tests, solution] of hashes(first)) {
      expect(env).toMatch(SHA);
      expect(tests).toMatch(SHA);
      expect(solution).toMatch(SHA);
    }
    expect(new Set(first.tasks.map((t) => t.environmentHash)).size).toBe(5);
  });
});

describe("the environment hash", () => {
  it("changes with content and the exec bit, not with other permission bits", async () => {
    const dir = await copyOf("count-errors");
    const before = (await loadHarborTask(dir)).environmentHash;
    await chmod(join(dir, "environment/service.log"), 0o664);
    expect((await loadHarborTask(dir)).environmentHash).toBe(before);
    await chmod(join(dir, "environment/service.log"), 0o755);
    const executable = (await loadHarborTask(dir)).environmentHash;
    expect(executable).not.toBe(before);
    await writeFile(join(dir, "environment/service.log"), "changed\n");
    expect((await loadHarborTask(dir)).environmentHash).not.toBe(executable);
  });

  it("changes when a file is added, even an empty directory", async () => {
    const dir = await copyOf("wrong-oracle");
    const before = (await loadHarborTask(dir)).environmentHash;
    await mkdir(join(dir, "environment/empty"));
    expect((await loadHarborTask(dir)).environmentHash).not.toBe(before);
  });

  it("hashes a symlink that stays inside environment/ as a link", async () => {
    const dir = await copyOf("fix-median");
    await symlink("app/stats.py", join(dir, "environment/stats-link.py"));
    expect((await loadHarborTask(dir)).environmentHash).toMatch(SHA);
  });
});

describe("symlinks and special files are never followed", () => {
  it("refuses a symlink in environment/ that points outside it", async () => {
    const dir = await copyOf("fix-median");
    await symlink("/etc/passwd", join(dir, "environment/passwd"));
    const err = await loadError(loadHarborTask(dir));
    expect(err.message).toMatch(/environment\/passwd is a symlink to "\/etc\/passwd", outside .*environment\/: refused/);
    await unlink(join(dir, "environment/passwd"));
    await symlink("../../instruction.md", join(dir, "environment/app/up.md"));
    expect((await loadError(loadHarborTask(dir))).message).toMatch(/app\/up\.md is a symlink to "\.\.\/\.\.\/instruction\.md", outside/);
  });

  it("refuses any symlink in tests/ or solution/", async () => {
    const dir = await copyOf("wrong-oracle");
    await symlink("test.sh", join(dir, "tests/again.sh"));
    expect((await loadError(loadHarborTask(dir))).message).toMatch(/tests\/again\.sh is a symlink; .*tests\/ must hold plain files only/);
  });

  it("refuses instruction.md, task.toml or tests/ as symlinks", async () => {
    const dir = await copyOf("wrong-oracle");
    await unlink(join(dir, "instruction.md"));
    await symlink("/etc/hostname", join(dir, "instruction.md"));
    expect((await loadError(loadHarborTask(dir))).message).toMatch(/instruction\.md is a symlink: refused/);

    const other = await copyOf("slow-verifier");
    await rm(join(other, "tests"), { recursive: true });
    await symlink(join(FIXTURES, "wrong-oracle/tests"), join(other, "tests"));
    expect((await loadError(loadHarborTask(other))).message).toMatch(/tests must be a directory, not a symlink/);
  });

  it("skips a symlinked task directory under a root, with a warning", async () => {
    const root = join(scratch, "linked-root");
    await mkdir(root);
    await symlink(join(FIXTURES, "fix-median"), join(root, "fix-median"));
    const { tasks, warnings } = await loadHarborTasks(root);
    expect(tasks).toEqual([]);
    expect(warnings[0]).toMatch(/fix-median is a symlink: skipped/);
  });
});

describe("required files and limits", () => {
  it("needs instruction.md, task.toml and tests/test.sh", async () => {
    for (const [file, pattern] of [
      ["instruction.md", /instruction\.md is missing/],
      ["task.toml", /task\.toml is missing/],
      ["tests/test.sh", /tests\/test\.sh is missing/],
    ] as const) {
      const dir = await copyOf("wrong-oracle");
      await rm(join(dir, file));
      expect((await loadError(loadHarborTask(dir))).message).toMatch(pattern);
    }
  });

  it("needs environment/Dockerfile unless docker_image names a prebuilt image", async () => {
    const dir = await copyOf("wrong-oracle");
    await rm(join(dir, "environment"), { recursive: true });
    expect((await loadError(loadHarborTask(dir))).message).toMatch(/environment\/Dockerfile is missing .* names no \[environment\]\.docker_image/);
    await writeFile(join(dir, "task.toml"), '[environment]\ndocker_image = "python:3.12-slim"\n');
    const task = await loadHarborTask(dir);
    expect([task.config.dockerImage, task.environmentDir, task.environmentHash]).toEqual(["python:3.12-slim", null, null]);
  });

  it("refuses docker compose environments", async () => {
    const dir = await copyOf("wrong-oracle");
    await writeFile(join(dir, "environment/docker-compose.yaml"), "services: {}\n");
    expect((await loadError(loadHarborTask(dir))).message).toMatch(/multi-container tasks \(docker compose\) are not supported/);
  });

  it("names the task.toml and the field of a config error", async () => {
    const dir = await copyOf("wrong-oracle");
    await writeFile(join(dir, "task.toml"), "[agent]\ntimeout_sec = \"soon\"\n");
    const err = await loadError(loadHarborTask(dir));
    expect([err.file, err.field]).toEqual([`${dir}/task.toml`, "[agent].timeout_sec"]);
  });

  it("refuses tests/ past the file or byte limits", async () => {
    const dir = await copyOf("wrong-oracle");
    for (let i = 0; i < 5; i++) await writeFile(join(dir, `tests/data-${i}.txt`), "x".repeat(1000));
    expect((await loadError(loadHarborTask(dir, { filesLimits: { maxFiles: 4, maxBytes: 1 << 20 } }))).message).toMatch(/tests\/ holds more than 4 files and directories/);
    expect((await loadError(loadHarborTask(dir, { filesLimits: { maxFiles: 100, maxBytes: 4000 } }))).message).toMatch(/tests\/ holds more than 4000 bytes/);
  });

  it("warns when solution/ has no solve.sh, and allows no solution/ at all", async () => {
    const dir = await copyOf("slow-verifier");
    await rm(join(dir, "solution/solve.sh"));
    await writeFile(join(dir, "solution/notes.md"), "none\n");
    expect((await loadHarborTask(dir)).warnings).toEqual([`${dir}/solution/ has no solve.sh: the oracle cannot run this task`]);
    await rm(join(dir, "solution"), { recursive: true });
    const task = await loadHarborTask(dir);
    expect([task.solution, task.solutionHash]).toEqual([null, null]);
  });
});

describe("a root of tasks", () => {
  it("skips directories without task.toml with a warning, and plain and hidden entries silently", async () => {
    const root = await copyOf();
    await mkdir(join(root, "shared-assets"));
    await mkdir(join(root, ".git"));
    await writeFile(join(root, "README.md"), "tasks\n");
    const { tasks, warnings } = await loadHarborTasks(root);
    expect(tasks).toHaveLength(5);
    expect(warnings).toEqual([`${join(root, "shared-assets")} has no task.toml: skipped`]);
  });

  it("refuses two tasks with one name", async () => {
    const root = await copyOf();
    await cp(join(root, "fix-median"), join(root, "fix-median-copy"), { recursive: true });
    expect((await loadError(loadHarborTasks(root))).message).toMatch(/two tasks are named "edgegym\/fix-median": .*fix-median and .*fix-median-copy/);
  });

  it("follows the operator's own root when it is a symlink", async () => {
    const link = join(scratch, "root-link");
    await symlink(FIXTURES, link);
    expect((await loadHarborTasks(link)).tasks).toHaveLength(5);
  });

  it("says so when a root holds no task", async () => {
    const root = join(scratch, "empty-root");
    await mkdir(root);
    expect(await loadHarborTasks(root)).toEqual({ tasks: [], warnings: [`${root} holds no Harbor task (no subdirectory with task.toml)`] });
  });
});
