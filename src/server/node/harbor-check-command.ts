import { stat } from "node:fs/promises";
import { basename } from "node:path";
import { parseArgs } from "node:util";
import cliProgress from "cli-progress";
import { HarborTaskError } from "../../envs/builtin/harbor/errors.js";
import { loadHarborTasks, type HarborTaskDir } from "../../envs/builtin/harbor/task-dir.node.js";
import { DockerSandboxProvider } from "../../envs/sandbox/docker.node.js";
import { SandboxError } from "../../envs/sandbox/types.js";
import { ALL_SETTINGS, settingValue, type Setting } from "../settings.js";
import { imageBuilder } from "./harbor.js";
import { checkHarborTasks, DEFAULT_ORACLE_TIMEOUT_SEC, passed, type TaskCheck } from "./harbor-check.js";

export const HARBOR_CHECK_USAGE = `edgegym harbor check DIR [--task NAME]... [--jobs 2]

Runs every Harbor task under DIR as Harbor's oracle agent does: the task's
image, a container with its limits and network, solution/solve.sh run as the
agent (under [agent].timeout_sec, else ${DEFAULT_ORACLE_TIMEOUT_SEC} s), then tests/test.sh as the
verifier. Prints one row per task: the reward or why there is none
(verifier_timeout, sandbox_build_failed, ...), solve.sh's exit code, the
seconds it took, and the CTRF test counts.

  --task NAME   only this task ([task].name or its directory's name); repeatable
  --jobs N      tasks at once (default 2)

Exit code: 0 when every oracle scored reward 1, 1 otherwise, 2 on a usage
error or when DIR holds no task, 130 after Ctrl-C (the run's containers are
removed first). Needs a Docker daemon (DOCKER_HOST or /var/run/docker.sock);
EDGEGYM_SANDBOX_PIDS sets the processes per container (default 512).`;

const HARBOR_USAGE = `edgegym harbor check DIR [--task NAME]... [--jobs N]   (edgegym harbor check --help)`;

class UsageError extends Error {}

const PIDS = ALL_SETTINGS.find((row) => row.variable === "EDGEGYM_SANDBOX_PIDS") as Setting<number>;

/** The reward, or why there is none. */
function resultText(check: TaskCheck): string {
  if (check.failure) return check.failure.code;
  const reward = check.reward as number;
  return Number.isInteger(reward) ? String(reward) : String(Number(reward.toFixed(3)));
}

function oracleText(check: TaskCheck): string {
  if (!check.oracle) return "-";
  return check.oracle.timedOut ? "timeout" : String(check.oracle.exitCode ?? "killed");
}

/** One row per task, columns padded; a plain-text table that CI logs keep readable. */
export function formatCheckTable(checks: readonly TaskCheck[]): string {
  const rows = [
    ["task", "result", "oracle", "seconds", "tests passed/failed"],
    ...checks.map((c) => [c.task, resultText(c), oracleText(c), c.seconds.toFixed(1), c.tests ? `${c.tests.passed}/${c.tests.failed}` : "-"]),
  ];
  const widths = rows[0]?.map((_, col) => Math.max(...rows.map((row) => (row[col] ?? "").length))) ?? [];
  return rows.map((row) => row.map((cell, col) => (col === row.length - 1 ? cell : cell.padEnd(widths[col] ?? 0))).join("  ")).join("\n");
}

/** Why each task that did not score 1 failed: the typed failure's message and the last lines of its logs. */
export function formatCheckDetails(checks: readonly TaskCheck[]): string {
  const indent = (text: string): string =>
    text
      .split("\n")
      .map((line) => `    ${line}`)
      .join("\n");
  const parts: string[] = [];
  for (const check of checks) {
    if (passed(check) || check.failure?.code === "interrupted") continue;
    const lines = [`${check.task}: ${check.failure ? check.failure.message : `reward ${resultText(check)}, not 1`}`];
    if (check.logs?.oracle) lines.push("  /logs/agent/oracle.txt (last lines):", indent(check.logs.oracle));
    if (check.logs?.verifier) lines.push("  /logs/verifier/test-stdout.txt (last lines):", indent(check.logs.verifier));
    parts.push(lines.join("\n"));
  }
  return parts.join("\n\n");
}

/** Progress on stderr: a bar on a terminal (with a line per finished task above it), else one line per finished task. */
interface CheckProgress {
  started(task: HarborTaskDir): void;
  finished(check: TaskCheck): void;
  stop(): void;
}

function createCheckProgress(total: number, stream: NodeJS.WriteStream = process.stderr): CheckProgress {
  let done = 0;
  const running = new Set<string>();
  const line = (check: TaskCheck): string => `[${done}/${total}] ${check.task}: ${resultText(check)} (oracle ${oracleText(check)}, ${check.seconds.toFixed(1)} s)`;
  if (!stream.isTTY) {
    return {
      started: (task) => running.add(task.name),
      finished: (check) => {
        done++;
        stream.write(`${line(check)}\n`);
      },
      stop: () => undefined,
    };
  }
  const multi = new cliProgress.MultiBar(
    { stream, format: "{bar} {value}/{total} tasks | {passed} scored 1 | running: {running}", barsize: 20, hideCursor: true, clearOnComplete: true, fps: 8 },
    cliProgress.Presets.shades_classic,
  );
  let scored = 0;
  const width = Math.max(10, (stream.columns || 80) - 60);
  const runningText = (): string => {
    const text = [...running].join(", ") || "-";
    return text.length > width ? `${text.slice(0, width - 1)}…` : text;
  };
  const bar = multi.create(total, 0, { passed: 0, running: "-" });
  return {
    started: (task) => {
      running.add(task.name);
      bar.update(done, { passed: scored, running: runningText() });
    },
    finished: (check) => {
      done++;
      running.delete(check.task);
      if (passed(check)) scored++;
      multi.log(`${line(check)}\n`);
      bar.update(done, { passed: scored, running: runningText() });
    },
    stop: () => {
      // A line logged since the last frame is only written by the next one: draw it before the bar goes.
      multi.update();
      multi.stop();
    },
  };
}

function parseCheckArgs(argv: string[]): { dir: string; tasks: string[]; jobs: number } | "help" {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: { task: { type: "string", multiple: true }, jobs: { type: "string", short: "j" }, help: { type: "boolean", short: "h" } },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  const { values, positionals } = parsed;
  if (values.help) return "help";
  if (positionals.length !== 1) throw new UsageError(positionals.length ? `one DIR, got ${positionals.length}: ${positionals.join(" ")}` : "DIR is missing: the directory that holds the Harbor task directories");
  const jobs = values.jobs === undefined ? 2 : Number(values.jobs);
  if (!Number.isInteger(jobs) || jobs < 1 || jobs > 64) throw new UsageError(`--jobs must be a whole number from 1 to 64, got "${values.jobs}"`);
  return { dir: positionals[0] as string, tasks: values.task ?? [], jobs };
}

/** The tasks named by --task (by `[task].name` or directory name), all when none is named. */
function selectTasks(tasks: readonly HarborTaskDir[], names: readonly string[]): HarborTaskDir[] {
  if (!names.length) return [...tasks];
  const unknown = names.filter((name) => !tasks.some((t) => t.name === name || basename(t.dir) === name));
  if (unknown.length) throw new UsageError(`no task named ${unknown.map((n) => `"${n}"`).join(", ")}; tasks: ${tasks.map((t) => t.name).join(", ")}`);
  return tasks.filter((t) => names.includes(t.name) || names.includes(basename(t.dir)));
}

async function checkCommand(argv: string[]): Promise<number> {
  const args = parseCheckArgs(argv);
  if (args === "help") {
    console.log(HARBOR_CHECK_USAGE);
    return 0;
  }
  const isDir = await stat(args.dir).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!isDir) throw new UsageError(`${args.dir} is not a directory of Harbor tasks`);
  let loaded;
  try {
    loaded = await loadHarborTasks(args.dir);
  } catch (err) {
    // A task that does not load is the task author's to fix: a failed check, not a usage error.
    if (err instanceof HarborTaskError) {
      console.error(`edgegym harbor check: ${err.message}`);
      return 1;
    }
    throw err;
  }
  // With no task, the last warning says so, and the usage error below says it again.
  for (const warning of loaded.tasks.length ? loaded.warnings : loaded.warnings.slice(0, -1)) console.error(`harbor: ${warning}`);
  if (!loaded.tasks.length) throw new UsageError(`${args.dir} holds no Harbor task (no subdirectory with task.toml)`);
  const tasks = selectTasks(loaded.tasks, args.tasks);

  const pids = settingValue(PIDS, process.env, {}) ?? 512;
  const provider = new DockerSandboxProvider({ defaultPids: pids });
  const controller = new AbortController();
  let interrupts = 0;
  const onSigint = (): void => {
    if (++interrupts > 1) {
      console.error("edgegym harbor check: quitting now; a container left behind is removed by the next check run after 10 minutes");
      process.exit(130);
    }
    console.error("\nstopping: removing this run's containers (Ctrl-C again to quit now)");
    controller.abort();
  };
  process.on("SIGINT", onSigint);
  const progress = createCheckProgress(tasks.length);
  let run;
  try {
    run = await checkHarborTasks(tasks, {
      provider,
      imageFor: imageBuilder(provider),
      defaults: { pids },
      jobs: args.jobs,
      signal: controller.signal,
      onStart: (task) => progress.started(task),
      onResult: (check) => progress.finished(check),
    });
  } catch (err) {
    // Each task's own failures are rows of the table; what reaches here is the daemon itself (the start-up sweep).
    if (!(err instanceof SandboxError)) throw err;
    console.error(`edgegym harbor check: the Docker daemon did not answer (DOCKER_HOST or /var/run/docker.sock): ${err.message}`);
    return 1;
  } finally {
    progress.stop();
    process.off("SIGINT", onSigint);
  }
  if (run.swept) console.error(`harbor check: removed ${run.swept} container(s) left by an earlier check run`);
  console.log(formatCheckTable(run.checks));
  const details = formatCheckDetails(run.checks);
  if (details) console.log(`\n${details}`);
  const ok = run.checks.filter(passed).length;
  if (run.interrupted) {
    console.error(`interrupted: ${run.checks.filter((c) => c.failure?.code !== "interrupted").length}/${run.checks.length} tasks checked; this run's containers are removed`);
    return 130;
  }
  console.log(`\n${ok}/${run.checks.length} tasks: the oracle scored reward 1${ok === run.checks.length ? "" : ` (${run.checks.length - ok} did not)`}`);
  return ok === run.checks.length ? 0 : 1;
}

/**
 * `edgegym harbor SUBCOMMAND`: `check DIR` runs every task's oracle, then its tests, and
 * exits 0 only when each scored reward 1, so task authors can gate CI on it.
 */
export async function harborCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  try {
    if (sub === "check") return await checkCommand(rest);
    if (sub === undefined || sub === "--help" || sub === "-h" || sub === "help") {
      console.log(`${HARBOR_USAGE}\n\n${HARBOR_CHECK_USAGE}`);
      return sub === undefined ? 2 : 0;
    }
    throw new UsageError(`unknown harbor command "${sub}"`);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`edgegym harbor: ${err.message}\n\n${HARBOR_USAGE}`);
    return 2;
  }
}
