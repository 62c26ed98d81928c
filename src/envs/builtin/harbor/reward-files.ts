/**
 * The reward a Harbor verifier wrote, read as Harbor 0.25 reads it (`verifier/verifier.py`):
 * `/logs/verifier/reward.json` when it exists, else `/logs/verifier/reward.txt`.
 *
 * - reward.json: a JSON object of name → finite number (`{"reward": 0.5, "tests_passed": 3}`).
 *   Anything else — an array, a bare number, a string or boolean value, a number too large
 *   for a double — is `reward_file_invalid`, with no fall back to reward.txt (Harbor's
 *   VerifierOutputParseError).
 * - reward.txt: one number (Python's `float()`: whitespace around it, `_` between digits,
 *   exponents), read as `{"reward": x}`. `nan` and `inf`, which `float()` takes, are refused:
 *   a non-finite reward must never reach a trainer.
 * - neither file: `reward_file_missing`; a file of nothing but whitespace: `reward_file_empty`.
 *
 * The key `reward` is the reward; every other key is a metric. reward.json WITHOUT a
 * `reward` key is `reward_file_invalid` (unless the caller names another key): Harbor keeps
 * such a file as a dict of rewards with no scalar, and verifiers 0.4 passes the dict on
 * as separate reward parts — inventing one number from it (a mean, the first key) would
 * teach a trainer a reward the task's author never wrote, so it is a verifier failure,
 * masked, until the operator says which key is the reward.
 *
 * None of these errors is reward 0: a trainer masks them (DESIGN.md, failures are typed).
 */
import { HarborRewardError } from "./errors.js";

export { parseCtrfReport, type CtrfReport, type CtrfTest } from "./ctrf-report.js";

/** Read at most this much of each reward file; a longer one is invalid (Harbor reads a few bytes). */
export const MAX_REWARD_FILE_BYTES = 1 << 20;

/** Where test.sh writes, in the box. */
export const REWARD_JSON_PATH = "/logs/verifier/reward.json";
export const REWARD_TXT_PATH = "/logs/verifier/reward.txt";

/** The two files' contents as read from the box; null when the file does not exist. */
export interface RewardFiles {
  rewardJson: Uint8Array | string | null;
  rewardTxt: Uint8Array | string | null;
}

export interface VerifierReward {
  reward: number;
  /** reward.json's other keys; empty for reward.txt. */
  metrics: Record<string, number>;
  source: "reward.json" | "reward.txt";
}

export interface ParseRewardOptions {
  /** reward.json's key that is the reward. Default "reward", as Harbor and verifiers. */
  rewardKey?: string;
}

function decode(content: Uint8Array | string, file: "reward.json" | "reward.txt"): string {
  const size = typeof content === "string" ? content.length : content.byteLength;
  if (size > MAX_REWARD_FILE_BYTES) throw new HarborRewardError("reward_file_invalid", `${file} is ${size} bytes, more than ${MAX_REWARD_FILE_BYTES}`, file);
  if (typeof content === "string") return content;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(content);
  } catch {
    throw new HarborRewardError("reward_file_invalid", `${file} is not UTF-8 text`, file);
  }
}

/** Python's `float()` on a finite decimal: `_` allowed between digits only. */
const PY_FLOAT = /^[+-]?(?:\d(?:_?\d)*(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:[eE][+-]?\d(?:_?\d)*)?$/;
const PY_NON_FINITE = /^[+-]?(?:inf|infinity|nan)$/i;

function parseRewardTxt(text: string): VerifierReward {
  const value = text.trim();
  if (PY_NON_FINITE.test(value)) throw new HarborRewardError("reward_file_invalid", `reward.txt holds "${value}": the reward must be a finite number`, "reward.txt");
  const reward = PY_FLOAT.test(value) ? Number(value.replace(/_/g, "")) : Number.NaN;
  if (!Number.isFinite(reward)) {
    const shown = value.length > 40 ? `${value.slice(0, 37)}...` : value;
    throw new HarborRewardError("reward_file_invalid", `reward.txt must hold one number, such as 1 or 0.25; it holds "${shown}"`, "reward.txt");
  }
  return { reward, metrics: {}, source: "reward.txt" };
}

function parseRewardJson(text: string, rewardKey: string): VerifierReward {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new HarborRewardError("reward_file_invalid", `reward.json is not JSON: ${err instanceof Error ? err.message : String(err)}`, "reward.json");
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new HarborRewardError("reward_file_invalid", `reward.json must be an object of name → number, such as {"reward": 1}; it is ${Array.isArray(parsed) ? "an array" : JSON.stringify(parsed)}`, "reward.json");
  }
  const values: Record<string, number> = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (typeof value !== "number" || !Number.isFinite(value)) {
      throw new HarborRewardError("reward_file_invalid", `reward.json: "${key}" must be a finite number; it is ${JSON.stringify(value) ?? String(value)}`, "reward.json");
    }
    values[key] = value;
  }
  const reward = Object.hasOwn(values, rewardKey) ? values[rewardKey] : undefined;
  if (reward === undefined) {
    const keys = Object.keys(values);
    throw new HarborRewardError(
      "reward_file_invalid",
      `reward.json has no "${rewardKey}" key (${keys.length ? `keys: ${keys.map((k) => `"${k}"`).join(", ")}` : "it is empty"}): ` +
        `edgegym needs one scalar reward; write "${rewardKey}" in test.sh, or configure which key is the reward`,
      "reward.json",
    );
  }
  const { [rewardKey]: _reward, ...metrics } = values;
  return { reward, metrics, source: "reward.json" };
}

/**
 * The verifier's reward from the files test.sh left, or a `HarborRewardError`.
 *
 * @example parseRewardFiles({ rewardJson: '{"reward": 0.5, "tests_passed": 2}', rewardTxt: null })
 * // { reward: 0.5, metrics: { tests_passed: 2 }, source: "reward.json" }
 */
export function parseRewardFiles(files: RewardFiles, options: ParseRewardOptions = {}): VerifierReward {
  const rewardKey = options.rewardKey ?? "reward";
  const file = files.rewardJson !== null ? "reward.json" : files.rewardTxt !== null ? "reward.txt" : null;
  if (file === null) {
    throw new HarborRewardError("reward_file_missing", "the verifier wrote neither /logs/verifier/reward.json nor /logs/verifier/reward.txt");
  }
  const text = decode((file === "reward.json" ? files.rewardJson : files.rewardTxt) as Uint8Array | string, file);
  if (!text.trim()) throw new HarborRewardError("reward_file_empty", `/logs/verifier/${file} is empty`, file);
  return file === "reward.json" ? parseRewardJson(text, rewardKey) : parseRewardTxt(text);
}
