/**
 * mini-swe-agent 2.4.6 as a harness inside a Harbor task's box, for tests of the per-episode
 * model endpoint: the task `test/fixtures/harbor-harness/write-greeting` (create
 * /app/greeting.txt with "hello") whose image has mini-swe-agent in a venv at
 * /opt/mini-swe-agent, the scripted replies that solve it, and the command that runs mini.
 *
 * pip inside a container fails on these machines (HTTPS egress is intercepted), so the wheels
 * are downloaded on the host (`python3 -m pip download`, ~60 MB, into a cache reused across
 * runs) and put next to the task's Dockerfile; the image then builds offline. The checked-in
 * fixture has no wheels/ and does not build as is: use `ensureMiniSweTask()`'s copy.
 *
 * @example
 * const { taskDir } = await ensureMiniSweTask();           // load it as a Harbor task dir
 * const upstream = await startScriptedUpstream({ replies: MINI_SOLVING_REPLIES, host: "0.0.0.0" });
 * // run MINI_AGENT_COMMAND in the box via `sh -c` with OPENAI_BASE_URL, OPENAI_API_KEY and
 * // EDGEGYM_INSTRUCTION set: exactly MINI_SOLVING_REPLIES.length calls, exit 0, reward 1.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFile, cp, link, mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { buildImage } from "../../src/envs/sandbox/docker-build.node.js";
import { DockerEngine } from "../../src/envs/sandbox/docker-engine.node.js";
import type { ScriptedAssistantReply } from "./scripted-upstream.js";

const run = promisify(execFile);

export const MINI_SWE_AGENT_VERSION = "2.4.6";
/** pip's own wheel runs the install inside the image (the base image has no pip). */
const PIP_VERSION = "26.3";

/** The fixture as checked in (without wheels/). */
export const MINI_SWE_FIXTURE = resolve(dirname(fileURLToPath(import.meta.url)), "../fixtures/harbor-harness/write-greeting");
/** `[task].name` of the fixture. */
export const MINI_SWE_TASK_NAME = "edgegym/write-greeting";

/** The model name mini sends (`openai/NAME` sends `"model": "NAME"`). */
export const MINI_MODEL = "edgegym-policy";
/** Where mini writes its trajectory inside the box (it creates the directory). */
export const MINI_TRAJECTORY = "/logs/agent/mini-swe-agent.trajectory.json";

/**
 * The agent command, run in the task's box by `sh -c` with OPENAI_BASE_URL (the endpoint's base
 * URL, ending in /v1), OPENAI_API_KEY and EDGEGYM_INSTRUCTION (the task text) in its environment.
 * - MSWEA_CONFIGURED skips mini's first-run setup prompt; MSWEA_COST_TRACKING=ignore_errors lets an
 *   unpriced model through (else it raises after the first call); LITELLM_LOCAL_MODEL_COST_MAP stops
 *   litellm fetching prices from GitHub at import.
 * - MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT=1: a failed call ends the run at once instead of mini's
 *   10 tries 4-60 s apart (a test would hang for minutes on an endpoint error).
 * - `-y` no confirmations, `--exit-immediately` no "new task?" prompt, `-l 0` no cost limit,
 *   stdin from /dev/null (mini prompts otherwise). It runs each action with `bash` in a fresh
 *   subprocess (30 s limit) in its working directory, the task's workdir (/app).
 * - The absolute path does not depend on PATH (mini is also /usr/local/bin/mini).
 */
export const MINI_AGENT_COMMAND =
  "MSWEA_CONFIGURED=true MSWEA_COST_TRACKING=ignore_errors LITELLM_LOCAL_MODEL_COST_MAP=True MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT=1 " +
  `/opt/mini-swe-agent/bin/mini -y --exit-immediately -m openai/${MINI_MODEL} -l 0 -o ${MINI_TRAJECTORY} -t "$EDGEGYM_INSTRUCTION" </dev/null`;

/** A reply of mini's 2.x tool-call format: a THOUGHT and one call of `bash` {command}. */
export function bashReply(command: string, thought: string): ScriptedAssistantReply {
  return { content: `THOUGHT: ${thought}`, tool_calls: [{ type: "function", function: { name: "bash", arguments: { command } } }] };
}

/**
 * Three replies that solve the task: look, write the file, submit. mini makes exactly three calls
 * (the `COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT` output ends the run without another call) and
 * exits 0; the task's tests/test.sh then writes reward 1. Tool call ids are the upstream's
 * (`call_1`…).
 */
export const MINI_SOLVING_REPLIES: readonly ScriptedAssistantReply[] = [
  bashReply("ls -la /app", "Let me look at the working directory first."),
  bashReply("printf 'hello\\n' > /app/greeting.txt && cat /app/greeting.txt", "I will write the greeting file."),
  bashReply("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "The file holds hello; the task is done."),
];

/** The cache of downloaded wheels (EDGEGYM_WHEEL_CACHE, else ~/.cache/edgegym-wheels). */
export function wheelCacheRoot(): string {
  return process.env.EDGEGYM_WHEEL_CACHE ?? join(homedir(), ".cache", "edgegym-wheels");
}

/** The pins the image installs (environment/requirements.txt without comments). */
async function requirements(): Promise<string[]> {
  const text = await readFile(join(MINI_SWE_FIXTURE, "environment", "requirements.txt"), "utf8");
  return text
    .split("\n")
    .map((line) => line.replace(/#.*/, "").trim())
    .filter(Boolean);
}

const exists = (path: string) => stat(path).then(() => true, () => false);

export interface Wheelhouse {
  dir: string;
  /** Whether this call downloaded them (false: the cache had them). */
  downloaded: boolean;
  ms: number;
}

/**
 * The wheels of requirements.txt plus pip's, for CPython 3.11 on manylinux x86_64 (the base
 * image's Python, whatever the host's), in `<cache>/mini-swe-agent-2.4.6-<pins hash>/`. Downloaded
 * once (~60 MB, 20-40 s) with the host's `python3 -m pip` into a temporary directory that is then
 * renamed, so a cut-short download is never taken for a complete one.
 */
export async function ensureWheelhouse(): Promise<Wheelhouse> {
  const started = performance.now();
  const pins = [...(await requirements()), `pip==${PIP_VERSION}`];
  const key = createHash("sha256").update(pins.join("\n")).digest("hex").slice(0, 12);
  const dir = join(wheelCacheRoot(), `mini-swe-agent-${MINI_SWE_AGENT_VERSION}-${key}`);
  if (await exists(join(dir, ".complete"))) return { dir, downloaded: false, ms: Math.round(performance.now() - started) };
  await mkdir(wheelCacheRoot(), { recursive: true });
  const partial = `${dir}.partial-${process.pid}-${Date.now()}`;
  const platforms = ["manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux_2_5_x86_64", "manylinux1_x86_64"];
  try {
    await run(
      "python3",
      [
        "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps", "--only-binary=:all:",
        "--python-version", "3.11", "--implementation", "cp", "--abi", "cp311", "--abi", "abi3", "--abi", "none",
        ...platforms.flatMap((p) => ["--platform", p]),
        "--dest", partial, ...pins,
      ],
      { timeout: 10 * 60_000, maxBuffer: 16 * 1024 * 1024 },
    );
    const wheels = (await readdir(partial)).filter((name) => name.endsWith(".whl"));
    if (wheels.length !== pins.length) throw new Error(`expected ${pins.length} wheels, got ${wheels.length}`);
    await writeFile(join(partial, ".complete"), `${pins.join("\n")}\n`);
    await rename(partial, dir).catch(async (err: unknown) => {
      // Another process finished first: keep its copy.
      if (await exists(join(dir, ".complete"))) return;
      throw err;
    });
  } catch (err) {
    const detail = err instanceof Error ? ((err as { stderr?: string }).stderr || err.message) : String(err);
    throw new Error(`downloading mini-swe-agent's wheels failed (needs python3 with pip and PyPI): ${detail.slice(-2000)}`, { cause: err });
  } finally {
    await rm(partial, { recursive: true, force: true });
  }
  return { dir, downloaded: true, ms: Math.round(performance.now() - started) };
}

export interface MiniSweTask {
  /** A Harbor task directory: the fixture with environment/wheels/ filled in. */
  taskDir: string;
  wheelhouse: Wheelhouse;
  /** Milliseconds for the whole call (download and copy included). */
  ms: number;
}

/**
 * The fixture with its wheels, as a task directory that edgegym's loader and image builder
 * take as is (`environment/` is the build context). Kept under
 * `<tmpdir>/edgegym-mini-swe-task/<hash of fixture + wheels>/write-greeting`, reused while
 * neither changes: its environment hash, so edgegym's image tag, stays the same, and a build
 * of an unchanged Dockerfile and wheels hits Docker's layer cache. Wheels are hard-linked from
 * the cache where the file system allows, else copied.
 */
export async function ensureMiniSweTask(): Promise<MiniSweTask> {
  const started = performance.now();
  const wheelhouse = await ensureWheelhouse();
  const fixtureFiles = await listFiles(MINI_SWE_FIXTURE);
  const hash = createHash("sha256").update(wheelhouse.dir);
  for (const file of fixtureFiles) hash.update(`${file}\0`).update(await readFile(join(MINI_SWE_FIXTURE, file))).update("\0");
  const root = join(tmpdir(), "edgegym-mini-swe-task", hash.digest("hex").slice(0, 16));
  const taskDir = join(root, "write-greeting");
  if (!(await exists(join(root, ".complete")))) {
    const partial = `${root}.partial-${process.pid}-${Date.now()}`;
    try {
      const partialTask = join(partial, "write-greeting");
      await cp(MINI_SWE_FIXTURE, partialTask, { recursive: true });
      const wheels = join(partialTask, "environment", "wheels");
      await mkdir(wheels);
      for (const name of (await readdir(wheelhouse.dir)).filter((n) => n.endsWith(".whl"))) {
        await link(join(wheelhouse.dir, name), join(wheels, name)).catch(() => copyFile(join(wheelhouse.dir, name), join(wheels, name)));
      }
      await writeFile(join(partial, ".complete"), "");
      await mkdir(dirname(root), { recursive: true });
      await rename(partial, root).catch(async (err: unknown) => {
        if (await exists(join(root, ".complete"))) return;
        throw err;
      });
    } finally {
      await rm(partial, { recursive: true, force: true });
    }
  }
  return { taskDir, wheelhouse, ms: Math.round(performance.now() - started) };
}

/**
 * Builds the task's image as edgegym does (the Engine API, `environment/` packed as the build
 * context by `buildImage`), e.g. in a test's setup with a long timeout, so that the server's own
 * build of the task is a layer-cache hit (~2 s) within the test's time limit. Cold: 1.5-3 min on
 * 2 busy cores. The docker CLI's context tar differs from edgegym's, so a `docker build` of the
 * same directory does not warm edgegym's cache (nor the other way round).
 */
export async function buildMiniSweImage(tag = "edgegym-test/mini-swe-agent:2.4.6"): Promise<{ image: string; digest: string; taskDir: string; ms: number }> {
  const { taskDir } = await ensureMiniSweTask();
  const started = performance.now();
  const engine = new DockerEngine();
  try {
    const built = await buildImage(engine, join(taskDir, "environment"), tag, { timeoutMs: 15 * 60_000 });
    return { image: built.image, digest: built.digest, taskDir, ms: Math.round(performance.now() - started) };
  } finally {
    engine.close();
  }
}

async function listFiles(dir: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for (const entry of (await readdir(join(dir, prefix), { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...(await listFiles(dir, rel)));
    else out.push(rel);
  }
  return out;
}
