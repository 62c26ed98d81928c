import { openaiIfImported } from "./openai-module.js";

/**
 * Why a judge request failed, as a stable code a client may read. The judge's URL, the
 * network error (errno, host, port) and the judge's reply stay in the server log: echoed
 * to a client they would make the server a port scanner and leak upstream bodies.
 *
 * - `judge_unreachable`: no connection (refused, DNS, reset).
 * - `judge_timeout`: no reply within the rubric's `timeoutMs`.
 * - `judge_http_error`: the judge answered with an HTTP error status (the status is kept).
 * - `judge_bad_verdict`: the judge replied, but the reply holds no verdict.
 * - `judge_error`: anything else (e.g. a reply without choices).
 */
export type JudgeFailureCode = "judge_unreachable" | "judge_timeout" | "judge_http_error" | "judge_bad_verdict" | "judge_error";

/** What the server log receives for one failure; `ref` is also in the client's text, to find it. */
export interface JudgeFailureLog {
  ref: string;
  code: JudgeFailureCode;
  judge: string;
  model: string;
  baseURL: string;
  detail: string;
}

export type JudgeFailureLogger = (event: JudgeFailureLog) => void;

export const consoleJudgeLogger: JudgeFailureLogger = (event) => {
  console.error(`judge failure ref=${event.ref} code=${event.code} judge=${event.judge} model=${event.model} url=${event.baseURL}: ${event.detail}`);
};

/**
 * A judge failure. `clientText` is what a score component's `error` shows: the code, the
 * judge's name and a reference to the log line; `message` carries the same, and `cause`
 * the original error for in-process callers.
 */
export class JudgeFailure extends Error {
  readonly clientText: string;

  constructor(
    readonly code: JudgeFailureCode,
    readonly ref: string,
    judge: string,
    status?: number,
  ) {
    const what: Record<JudgeFailureCode, string> = {
      judge_unreachable: "could not be reached",
      judge_timeout: "did not reply in time",
      judge_http_error: `answered HTTP ${status ?? "error"}`,
      judge_bad_verdict: "replied without a verdict",
      judge_error: "failed",
    };
    const text = `${code}: judge "${judge}" ${what[code]} (ref ${ref}; details in the server log)`;
    super(text);
    this.name = "JudgeFailure";
    this.clientText = text;
  }
}

/** A short random reference that ties a client's error to the server's log line. */
export function failureRef(): string {
  return `jf_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
}

/** The code of what the openai client (or a verdict parser) threw, and its full text for the log. */
export function classifyJudgeError(err: unknown): { code: JudgeFailureCode; status?: number; detail: string } {
  // Imported with the first judge call; before that nothing can have thrown one of its errors.
  const OpenAI = openaiIfImported();
  if (!OpenAI) return { code: "judge_error", detail: err instanceof Error ? err.message : String(err) };
  if (err instanceof OpenAI.APIConnectionTimeoutError) return { code: "judge_timeout", detail: err.message };
  if (err instanceof OpenAI.APIConnectionError) {
    let cause: unknown = err.cause;
    while (cause instanceof Error && cause.cause instanceof Error) cause = cause.cause;
    return { code: "judge_unreachable", detail: `${err.message}${cause instanceof Error ? ` (${cause.message})` : ""}` };
  }
  if (err instanceof OpenAI.APIError) {
    const status = typeof err.status === "number" ? err.status : undefined;
    return { code: "judge_http_error", ...(status !== undefined ? { status } : {}), detail: err.message };
  }
  return { code: "judge_error", detail: err instanceof Error ? err.message : String(err) };
}
