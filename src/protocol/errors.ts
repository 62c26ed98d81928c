import { z } from "zod";

/**
 * Every error the API returns, with its one HTTP status. Codes are stable: clients
 * branch on them, so a code is never renamed and never changes status.
 */
export const ERROR_STATUS = {
  invalid_request: 400,
  malformed_json: 400,
  json_too_deep: 400,
  unauthorized: 401,
  origin_not_allowed: 403,
  host_not_allowed: 403,
  route_not_found: 404,
  env_not_found: 404,
  episode_not_found: 404,
  eval_not_found: 404,
  method_not_allowed: 405,
  turn_conflict: 409,
  episode_done: 409,
  episode_closed: 409,
  idempotency_key_reused: 409,
  eval_running: 409,
  env_version_mismatch: 409,
  fork_unavailable: 409,
  agent_running: 409,
  not_your_turn: 409,
  seat_not_client: 409,
  episode_expired: 410,
  sandbox_lost: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  invalid_env_args: 422,
  task_out_of_range: 422,
  invalid_message: 422,
  env_unavailable: 422,
  eval_too_large: 422,
  sandbox_build_failed: 422,
  unknown_seat: 422,
  unknown_policy: 422,
  seats_unsupported: 422,
  seat_required: 422,
  no_client_seat: 422,
  seat_mismatch: 422,
  client_seats_unsupported: 422,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
  sandbox_start_failed: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export type ErrorStatus = (typeof ERROR_STATUS)[ErrorCode];

export const ERROR_CODES = Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]];

export const ErrorBody = z
  .object({
    error: z
      .object({
        code: z.enum(ERROR_CODES).meta({ description: "Stable snake_case code; one HTTP status per code.", example: "turn_conflict" }),
        message: z.string().meta({ description: "What went wrong and how to fix it.", example: "Episode is at turn 2, the step was for turn 1." }),
        request_id: z.string().meta({ description: "Echoes the `X-Request-Id` response header.", example: "req_3f9c1e0a7b2d" }),
        details: z.unknown().optional().meta({ description: "Machine-readable context, e.g. the fields that failed validation." }),
      })
      .strict()
      .meta({ description: "The error: a stable code, a message for people, the request id." }),
  })
  .strict()
  .meta({ id: "Error", description: "Every non-2xx response has this body." });

export type ErrorBody = z.infer<typeof ErrorBody>;
