import { envContentHash, envVersionMismatch, type AnyEnvironment, type ContentHash, type EnvStamp, type EnvVersionCheck } from "../../envs/index.js";
import { ApiError } from "../errors.js";

/**
 * Refuses to run `env` on an episode stamped with another version of it: 409
 * `env_version_mismatch`, with both stamps in `details` and the ways out in the message.
 * Step calls it before running the environment, score before running an unscored
 * rubric, fork before copying (see docs/versions.md). Resolves to the environment's hash.
 *
 * @example await assertEnvVersion(env, row, config.envVersionCheck);
 */
export async function assertEnvVersion(env: AnyEnvironment, stamp: EnvStamp, check: EnvVersionCheck): Promise<ContentHash> {
  const hash = await envContentHash(env);
  const mismatch = envVersionMismatch(env, hash, stamp, check);
  if (mismatch) {
    throw new ApiError(
      "env_version_mismatch",
      `${mismatch}. Start a new episode, or score this one with POST …/rescore {"rubric": "current"}; an environment author can declare the old version compatible (compatibleWith), an operator can relax EDGEGYM_ENV_VERSION_CHECK.`,
      { episode_env_version: stamp.envVersion, episode_env_hash: stamp.envHash, env_version: env.version, env_hash: hash },
    );
  }
  return hash;
}
