import type { ExecResult } from "../../sandbox/types.js";

const encoder = new TextEncoder();

/**
 * What the model reads after a command: the exit code first (the one fact an agent always
 * needs), then the output, then a plain note when the output was cut or the command was
 * stopped, so a model never mistakes a cut log for a whole one.
 */
export function describeExec(result: ExecResult, timeoutSec: number): string {
  const head = result.timedOut
    ? `[timed out after ${timeoutSec} s; the command and its processes were killed]`
    : result.oomKilled
      ? `[killed: the box ran out of memory] exit code: ${result.exitCode ?? "none"}`
      : `exit code: ${result.exitCode ?? "none"}`;
  const body = result.output === "" ? "(no output)" : result.output;
  const cut = result.truncated ? `\n[output cut: the first ${encoder.encode(result.output).length} of ${result.outputBytes} bytes are shown]` : "";
  return `${head}\n${body}${cut}`;
}
