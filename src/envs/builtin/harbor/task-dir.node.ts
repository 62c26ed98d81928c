/**
 * Harbor task directories on disk, loaded into what the Harbor environment serves.
 *
 * One task (harbor `models/task/paths.py`): `instruction.md` and `task.toml` (required),
 * `tests/test.sh` (required), `environment/Dockerfile` (required unless
 * `[environment].docker_image` names a prebuilt image), `solution/solve.sh` (optional:
 * the oracle). A root holds tasks as its direct subdirectories.
 *
 * Loading happens once, at startup, so everything a step later needs is read here: the
 * config (resolved), the tests and solution files (bounded, to copy into a box), and
 * content hashes — of environment/, the image cache key, and of tests/. Nothing is read
 * through a symlink (see tree-hash.node.ts).
 */
import { lstat, readdir, realpath, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import type { ContentHash } from "../../content-hash.js";
import { HarborTaskError } from "./errors.js";
import { loadTaskConfig, type ResolvedTaskConfig } from "./task-config.js";
import { hashTree, readPlainFile, readTree, type TaskFile, type TreeLimits } from "./tree-hash.node.js";

export type { TaskFile } from "./tree-hash.node.js";

const MAX_TOML_BYTES = 256 * 1024;
const MAX_INSTRUCTION_BYTES = 1024 * 1024;

export interface TaskDirOptions {
  /**
   * Host variables that `${VAR}` templates in task.toml may read. Default EMPTY: see
   * env-template.ts — the server's environment holds its secrets and never reaches a box.
   */
  hostEnv?: Readonly<Record<string, string>>;
  /** tests/ and solution/, each: files and bytes. Default 10 000 files, 50 MB. */
  filesLimits?: TreeLimits;
  /** environment/ (only hashed, never held in memory). Default 50 000 files, 2 GiB. */
  environmentLimits?: TreeLimits;
}

export const DEFAULT_FILES_LIMITS: TreeLimits = { maxFiles: 10_000, maxBytes: 50 * 1024 * 1024 };
export const DEFAULT_ENVIRONMENT_LIMITS: TreeLimits = { maxFiles: 50_000, maxBytes: 2 * 1024 * 1024 * 1024 };

/** One loaded task. */
export interface HarborTaskDir {
  /** The directory's real path. */
  dir: string;
  /** `config.name`: `[task].name`, else the directory's name. */
  name: string;
  config: ResolvedTaskConfig;
  /**
   * environment/ as a build context (it holds a Dockerfile); null without one. When the task
   * also names `config.dockerImage`, Harbor runs that prebuilt image and builds nothing: so
   * should the caller.
   */
  environmentDir: string | null;
  /** Hash of environment/ (the image cache key); null without environment/. */
  environmentHash: ContentHash | null;
  /** tests/, copied to /tests before the verifier runs; holds test.sh. */
  tests: TaskFile[];
  testsHash: ContentHash;
  /** solution/, copied to /solution for the oracle; null without solution/. */
  solution: TaskFile[] | null;
  solutionHash: ContentHash | null;
  /** Harmless oddities, each naming its file: unknown task.toml keys, a solution without solve.sh. */
  warnings: string[];
}

type Kind = "file" | "dir" | "symlink" | "other" | "missing";

async function kindOf(path: string): Promise<Kind> {
  try {
    const stat = await lstat(path);
    return stat.isSymbolicLink() ? "symlink" : stat.isDirectory() ? "dir" : stat.isFile() ? "file" : "other";
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return "missing";
    throw err;
  }
}

/** The operator's own path (a root, a task named by hand) may be a symlink: it is followed, once. */
async function isDirectory(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

/** A subdirectory that must be a real directory when present (a symlinked tests/ could point anywhere). */
async function optionalDir(dir: string, name: string, label: string): Promise<string | null> {
  const kind = await kindOf(join(dir, name));
  if (kind === "missing") return null;
  if (kind !== "dir") throw new HarborTaskError(`${label}/${name} must be a directory${kind === "symlink" ? ", not a symlink" : ""}`, `${label}/${name}`);
  return join(dir, name);
}

/**
 * Loads the task in `dir`. Errors are `HarborTaskError`s naming the file and, for
 * task.toml, the field.
 *
 * @example const task = await loadHarborTask("test/fixtures/harbor-tasks/fix-median");
 */
export async function loadHarborTask(dir: string, options: TaskDirOptions = {}): Promise<HarborTaskDir> {
  const label = dir.replace(/\/+$/, "");
  if (!(await isDirectory(dir))) throw new HarborTaskError(`${label} is not a directory`, label);
  const real = await realpath(dir);
  const filesLimits = options.filesLimits ?? DEFAULT_FILES_LIMITS;
  const decoder = new TextDecoder();

  const tomlText = decoder.decode(await readPlainFile(join(real, "task.toml"), `${label}/task.toml`, MAX_TOML_BYTES));
  const instruction = decoder.decode(await readPlainFile(join(real, "instruction.md"), `${label}/instruction.md`, MAX_INSTRUCTION_BYTES));
  const { resolved, warnings } = loadTaskConfig(tomlText, {
    dirName: basename(real),
    instruction,
    hostEnv: options.hostEnv ?? {},
    file: `${label}/task.toml`,
  });

  const testsDir = await optionalDir(real, "tests", label);
  if (!testsDir || (await kindOf(join(testsDir, "test.sh"))) !== "file") {
    throw new HarborTaskError(`${label}/tests/test.sh is missing (or not a plain file): every Harbor task needs the verifier script`, `${label}/tests/test.sh`);
  }
  const tests = await readTree(testsDir, `${label}/tests/`, filesLimits);

  const environmentDir = await optionalDir(real, "environment", label);
  for (const compose of ["docker-compose.yaml", "docker-compose.yml"]) {
    if (environmentDir && (await kindOf(join(environmentDir, compose))) !== "missing") {
      throw new HarborTaskError(`${label}/environment/${compose}: multi-container tasks (docker compose) are not supported by edgegym; use one Dockerfile`, `${label}/environment/${compose}`);
    }
  }
  const hasDockerfile = environmentDir !== null && (await kindOf(join(environmentDir, "Dockerfile"))) === "file";
  if (!hasDockerfile && resolved.dockerImage === null) {
    throw new HarborTaskError(
      `${label}/environment/Dockerfile is missing (or not a plain file), and task.toml names no [environment].docker_image: the task has no box to run in`,
      `${label}/environment/Dockerfile`,
    );
  }
  const environmentHash = environmentDir ? await hashTree(environmentDir, `${label}/environment/`, options.environmentLimits ?? DEFAULT_ENVIRONMENT_LIMITS) : null;

  const solutionDir = await optionalDir(real, "solution", label);
  const solution = solutionDir ? await readTree(solutionDir, `${label}/solution/`, filesLimits) : null;
  if (solution && !solution.files.some((f) => f.relativePath === "solve.sh")) warnings.push(`${label}/solution/ has no solve.sh: the oracle cannot run this task`);

  return {
    dir: real,
    name: resolved.name,
    config: resolved,
    environmentDir: hasDockerfile ? environmentDir : null,
    environmentHash,
    tests: tests.files,
    testsHash: tests.hash,
    solution: solution?.files ?? null,
    solutionHash: solution?.hash ?? null,
    warnings,
  };
}

/** Every task directly under a root, and why anything there was skipped. */
export interface HarborTaskSet {
  /** Sorted by name. */
  tasks: HarborTaskDir[];
  /** Directories skipped (no task.toml, a symlink) and every task's own warnings. */
  warnings: string[];
}

/**
 * Loads every task directly under `root`, sorted by name. A subdirectory without
 * task.toml is skipped with a warning (a README folder, a shared asset); hidden entries
 * and plain files are passed over; two tasks with one name are an error, as is any task
 * that does not load.
 *
 * @example const { tasks, warnings } = await loadHarborTasks("test/fixtures/harbor-tasks");
 */
export async function loadHarborTasks(root: string, options: TaskDirOptions = {}): Promise<HarborTaskSet> {
  const label = root.replace(/\/+$/, "");
  if (!(await isDirectory(root))) throw new HarborTaskError(`${label} is not a directory of Harbor tasks`, label);
  const warnings: string[] = [];
  const tasks: HarborTaskDir[] = [];
  const names = (await readdir(root)).filter((n) => !n.startsWith(".")).sort();
  for (const name of names) {
    const dir = join(root, name);
    const kind = await kindOf(dir);
    if (kind === "symlink") {
      warnings.push(`${dir} is a symlink: skipped (task directories are not followed through links)`);
      continue;
    }
    if (kind !== "dir") continue;
    if ((await kindOf(join(dir, "task.toml"))) === "missing") {
      warnings.push(`${dir} has no task.toml: skipped`);
      continue;
    }
    const task = await loadHarborTask(dir, options);
    warnings.push(...task.warnings);
    tasks.push(task);
  }
  tasks.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (let i = 1; i < tasks.length; i++) {
    const [a, b] = [tasks[i - 1] as HarborTaskDir, tasks[i] as HarborTaskDir];
    if (a.name === b.name) throw new HarborTaskError(`two tasks are named "${a.name}": ${a.dir} and ${b.dir}; task names must be unique under ${label}`, label);
  }
  if (!tasks.length) warnings.push(`${label} holds no Harbor task (no subdirectory with task.toml)`);
  return { tasks, warnings };
}
