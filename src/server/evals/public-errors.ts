import type { EvalRollout, EvalRolloutError } from "../../protocol/index.js";

/**
 * What a client reads for each model failure of a server-run job. The raw text (endpoint
 * URL, errno, the upstream's reply body) describes the operator's model endpoint, so it
 * goes to the server log with the job id; the code (`error`) is unchanged and stable.
 */
const MODEL_ERROR_TEXT: Record<string, string> = {
  model_rate_limited: "the model endpoint rate-limited the request",
  model_server_error: "the model endpoint answered with a server error",
  model_timeout: "the model request timed out",
  model_connection_error: "the model endpoint could not be reached",
  model_auth_error: "the model endpoint refused the server's credentials",
  model_bad_request: "the model endpoint refused the request",
  model_bad_response: "the model endpoint's reply could not be read",
};

/** The client-safe form of a rollout error; errors that are not the model endpoint's (env_rejected, aborted) are already ours and kept. */
export function publicRolloutError(jobId: string, error: EvalRolloutError, where: string): EvalRolloutError {
  const text = MODEL_ERROR_TEXT[error.error];
  if (text === undefined) return error;
  console.error(`eval job ${jobId} ${where}: ${error.error} after ${error.attempts} attempt(s): ${error.error_chain_str}`);
  const safe = `${text} (eval job ${jobId}; details in the server log)`;
  return { ...error, error_chain_str: safe, error_chain_repr: safe };
}

/** A rollout as stored for clients: its error, if any, in client-safe form. */
export function publicRollout(jobId: string, row: EvalRollout): EvalRollout {
  if (!row.error) return row;
  return { ...row, error: publicRolloutError(jobId, row.error, `rollout ${row.example_id}/${row.rollout_index}`) };
}
