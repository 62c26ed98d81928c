/** One call of the python tool: the episode's earlier cells are replayed, then `code` runs. */
export interface PythonJob {
  /** Earlier cells of the episode, run first with their output discarded, to rebuild its variables. */
  replay: readonly string[];
  code: string;
  /** Seeds Python's `random` before the replay, so a replayed episode computes the same values. */
  seed: number;
  /** Time limit of `code` alone (the replay has its own budget). */
  timeoutMs: number;
  /** Characters of output kept; the rest is dropped and `truncated` set. */
  outputCap: number;
}

export interface PythonResult {
  /** `error`: the code raised (output holds the traceback); `timeout`: it was stopped; `crashed`: the interpreter died. */
  status: "ok" | "error" | "timeout" | "crashed";
  /** stdout and stderr interleaved, then the repr of a final expression, as a notebook shows it. */
  output: string;
  truncated: boolean;
  /** Which part ran out of time, when `status` is `timeout`. */
  phase?: "replay" | "code";
}

/** The sandbox a runner gives: reported by /health and GET /v1/envs/python. */
export interface PythonIsolation {
  level: string;
  detail: string;
  /** Set when the runner will not run jobs at this level: resets answer env_unavailable with this text. */
  refusal?: string;
}

/** Runs Python for the `python` environment. The Node build supplies a Pyodide sandbox. */
export interface PythonRunner {
  /** Stops the job (and kills its interpreter) when `signal` aborts. */
  run(job: PythonJob, signal?: AbortSignal): Promise<PythonResult>;
  isolation?(): PythonIsolation;
}
