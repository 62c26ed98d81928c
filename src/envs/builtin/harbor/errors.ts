/**
 * Errors of Harbor task loading and of reading a verifier's reward, as data with stable
 * codes. The two kinds are kept apart on purpose: a task that does not load is the
 * operator's to fix (`invalid_task`, at startup), while a verifier that wrote no usable
 * reward is an episode's failure that a trainer masks — never a reward of 0.
 */

/**
 * A task directory or its task.toml that edgegym cannot serve: bad TOML, a field of the
 * wrong type, a missing required file, a Harbor feature edgegym does not run, a directory
 * over the size limits. `file` names the file (relative to the task root, or the
 * directory), `field` the TOML field when one is at fault (`[environment].cpus`).
 */
export class HarborTaskError extends Error {
  readonly code = "invalid_task" as const;
  constructor(
    message: string,
    readonly file: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = "HarborTaskError";
  }
}

/**
 * Why a verifier produced no reward, as Harbor's own exceptions say it:
 * `reward_file_missing` (RewardFileNotFoundError), `reward_file_empty`
 * (RewardFileEmptyError), `reward_file_invalid` (VerifierOutputParseError).
 */
export type HarborRewardErrorCode = "reward_file_missing" | "reward_file_empty" | "reward_file_invalid";

/** A verifier's outputs that carry no reward. Never turned into reward 0 by this module. */
export class HarborRewardError extends Error {
  constructor(
    readonly code: HarborRewardErrorCode,
    message: string,
    /** `reward.json` or `reward.txt`; absent for `reward_file_missing`. */
    readonly file?: "reward.json" | "reward.txt",
  ) {
    super(message);
    this.name = "HarborRewardError";
  }
}
