import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

/** Harbor's oracle command (agents/oracle.py), the same on both systems. */
export const ORACLE_COMMAND = "mkdir -p /logs/agent && chmod +x /solution/solve.sh && (/solution/solve.sh) > /logs/agent/oracle.txt 2>&1";

/** A refused or failed request: its status and the error body's code (`network` when no answer came). */
export class HttpFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(`${status} ${code}: ${message}`);
  }
}

export interface OracleTrial {
  ms: number;
  reward: number;
  resetMs: number;
  oracleMs: number;
  scoreMs: number;
}

let callSeq = 0;
const call = (name: string, args: Record<string, unknown>) => ({ id: `call_${++callSeq}`, type: "function", function: { name, arguments: JSON.stringify(args) } });

/** Every file under a task's solution/, as Harbor's oracle uploads it to /solution. */
function solutionFiles(taskDir: string): { path: string; content: string }[] {
  const root = join(taskDir, "solution");
  const walk = (dir: string): string[] => readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? walk(join(dir, name)) : [join(dir, name)]));
  return walk(root)
    .sort()
    .map((file) => ({ path: `/solution/${relative(root, file)}`, content: readFileSync(file, "utf8") }));
}

/**
 * edgegym's `harbor` environment over its HTTP API, as a trainer drives it: reset, steps
 * whose tool calls run in the episode's container, score (which runs the task's tests
 * there and removes the container). Every request is bounded by `timeoutMs`.
 */
export class HarborEpisodes {
  constructor(
    private readonly url: string,
    private readonly timeoutMs = 180_000,
  ) {}

  async api<T>(method: string, path: string, body?: unknown): Promise<T> {
    let res: Response;
    try {
      res = await fetch(`${this.url}${path}`, {
        method,
        headers: body === undefined ? {} : { "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw new HttpFailure(0, "network", (err as Error).message);
    }
    const text = await res.text();
    if (!res.ok) {
      let code = "unknown";
      try {
        code = (JSON.parse(text) as { error?: { code?: string } }).error?.code ?? code;
      } catch {
        // not JSON
      }
      throw new HttpFailure(res.status, code, text.slice(0, 300));
    }
    return JSON.parse(text) as T;
  }

  /** A new episode of `task` (its container created); its id. */
  async reset(task: string): Promise<string> {
    return (await this.api<{ episode_id: string }>("POST", "/v1/envs/harbor/episodes", { args: { task } })).episode_id;
  }

  /** One assistant turn of tool calls; throws unless every tool reply says exit code 0 (for bash). */
  async step(id: string, turn: number, toolCalls: ReturnType<typeof call>[]): Promise<number> {
    const reply = await this.api<{ turn: number; messages: { role: string; content: string }[] }>("POST", `/v1/episodes/${id}/step`, { turn, message: { role: "assistant", content: "", tool_calls: toolCalls } });
    for (const m of reply.messages) {
      if (m.role === "tool" && /exit code: /.test(m.content) && !/^exit code: 0(\n|$)/.test(m.content)) {
        throw new HttpFailure(200, "command_failed", m.content.slice(0, 300));
      }
    }
    return reply.turn;
  }

  /** `bash` with `command` as turn `turn`; the next turn. */
  bash(id: string, turn: number, command: string): Promise<number> {
    return this.step(id, turn, [call("bash", { command })]);
  }

  /** Scores (runs the tests; the container goes); the reward, or a failure when a component reports an error. */
  async score(id: string): Promise<number> {
    const { score } = await this.api<{ score: { reward: number; components: { name: string; error?: string }[] } }>("POST", `/v1/episodes/${id}/score`);
    const failed = score.components.find((c) => c.error);
    if (failed) throw new HttpFailure(200, (failed.error as string).split(/[:\s]/)[0] || "score_error", failed.error as string);
    return score.reward;
  }

  close(id: string): Promise<unknown> {
    return this.api("DELETE", `/v1/episodes/${id}`);
  }

  /** Harbor's oracle trial: reset, solution/ written and solve.sh run (one turn, two tool calls), score. */
  async oracleTrial(task: string, taskDir: string): Promise<OracleTrial> {
    const t0 = performance.now();
    const id = await this.reset(task);
    const t1 = performance.now();
    try {
      await this.step(id, 0, [...solutionFiles(taskDir).map((f) => call("write_file", f)), call("bash", { command: ORACLE_COMMAND })]);
      const t2 = performance.now();
      const reward = await this.score(id);
      const t3 = performance.now();
      return { ms: t3 - t0, reward, resetMs: t1 - t0, oracleMs: t2 - t1, scoreMs: t3 - t2 };
    } finally {
      // Scoring removed the container; after a failure this does (and a closed episode answers 200 again).
      await this.close(id).catch(() => undefined);
    }
  }
}
