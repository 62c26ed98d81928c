import { SandboxError, type SandboxProvider } from "../../sandbox/types.js";
import { HarborRewardError } from "./errors.js";
import { MAX_REWARD_FILE_BYTES, parseCtrfReport, parseRewardFiles, REWARD_JSON_PATH, REWARD_TXT_PATH, type CtrfReport } from "./reward-files.js";
import type { HarborState } from "./state.js";
import type { HarborTaskDir } from "./task-dir.node.js";

const CTRF_PATH = "/logs/verifier/ctrf.json";
const CTRF_MAX_BYTES = 4 << 20;
/** Root's own steps around the tests (clearing stale rewards, copying tests in). */
const SETUP_TIMEOUT_MS = 60_000;

/**
 * A verifier that could not give a reward, with a stable code first in its message (the
 * score component's `error` reads `verifier_timeout: …`), so a trainer masks the rollout
 * instead of learning from a 0 that the agent never earned.
 */
export type VerifierFailureCode = "verifier_timeout" | "reward_file_missing" | "reward_file_empty" | "reward_file_invalid" | "sandbox_lost";

export class VerifierFailure extends Error {
  /** What the score component's `error` shows: the code, then why (the rubric reports `clientText` as is). */
  readonly clientText: string;

  constructor(
    readonly code: VerifierFailureCode,
    detail: string,
  ) {
    super(`${code}: ${detail}`);
    this.name = "VerifierFailure";
    this.clientText = this.message;
  }
}

export interface VerifierResult {
  reward: number;
  /** reward.json's other keys, and the CTRF counts when the tests wrote a report. */
  metrics: Record<string, number>;
  tests: CtrfReport | null;
}

async function readOptional(provider: SandboxProvider, id: string, path: string, maxBytes: number): Promise<Uint8Array | null> {
  try {
    return await provider.readFile(id, path, maxBytes);
  } catch (err) {
    if (err instanceof SandboxError && err.code === "file_not_found") return null;
    if (err instanceof SandboxError && err.code === "file_too_large") throw new VerifierFailure("reward_file_invalid", `${path} is larger than ${maxBytes} bytes`);
    throw err;
  }
}

/**
 * Runs the task's tests in the episode's box as Harbor's verifier does: as root, stale
 * reward files removed and tests/ copied to /tests (made executable); then test.sh as
 * `[verifier].user` with `[verifier].env`, its output to /logs/verifier/test-stdout.txt and
 * its exit code ignored, under `[verifier].timeout_sec`; then reward.json, else reward.txt.
 * Past the time limit the provider kills test.sh's processes in the box, so no reward
 * can be written after the deadline.
 */
export async function runVerifier(provider: SandboxProvider, task: HarborTaskDir, state: HarborState): Promise<VerifierResult> {
  const id = state.sandbox.id;
  const root = { timeoutMs: SETUP_TIMEOUT_MS, maxOutputBytes: 4096, user: "root" };
  try {
    await provider.exec(id, ["sh", "-c", `rm -f ${REWARD_TXT_PATH} ${REWARD_JSON_PATH} ${CTRF_PATH} && rm -rf /tests && mkdir -p /logs/verifier /logs/agent /tests && chmod 777 /logs/verifier /logs/agent`], root);
    // One archive for the whole tree, modes kept (test.sh is executable in the task; made so here too, as Harbor does).
    await provider.writeFiles(id, "/tests", task.tests);
    await provider.exec(id, ["sh", "-c", "chmod -R a+rX /tests && chmod a+x /tests/test.sh"], root);
    const timeoutSec = task.config.verifierTimeoutSec;
    const run = await provider.exec(id, ["bash", "-c", "(/tests/test.sh) > /logs/verifier/test-stdout.txt 2>&1"], {
      timeoutMs: Math.ceil(timeoutSec * 1000),
      maxOutputBytes: 4096,
      ...(task.config.verifierUser ? { user: task.config.verifierUser } : state.agentUser ? { user: state.agentUser } : {}),
      ...(state.workdir ? { workdir: state.workdir } : {}),
      env: { ...state.env, ...task.config.verifierEnv },
    });
    if (run.timedOut) throw new VerifierFailure("verifier_timeout", `the task's tests ran past [verifier].timeout_sec = ${timeoutSec} s and were stopped; no reward`);
    const files = {
      rewardJson: await readOptional(provider, id, REWARD_JSON_PATH, MAX_REWARD_FILE_BYTES),
      rewardTxt: await readOptional(provider, id, REWARD_TXT_PATH, MAX_REWARD_FILE_BYTES),
    };
    let parsed;
    try {
      parsed = parseRewardFiles(files);
    } catch (err) {
      if (err instanceof HarborRewardError) throw new VerifierFailure(err.code, err.message);
      throw err;
    }
    const tests = parseCtrfReport(await readOptional(provider, id, CTRF_PATH, CTRF_MAX_BYTES).catch(() => null));
    const metrics: Record<string, number> = { ...parsed.metrics };
    if (tests) {
      metrics.tests_passed ??= tests.summary.passed;
      metrics.tests_failed ??= tests.summary.failed;
    }
    return { reward: parsed.reward, metrics, tests };
  } catch (err) {
    if (err instanceof SandboxError && err.code === "sandbox_lost") throw new VerifierFailure("sandbox_lost", err.message);
    throw err;
  }
}
