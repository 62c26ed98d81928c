import type { EnvRegistry } from "../../envs/index.js";
import type { AgentState, HarnessTarget } from "../../envs/sandbox/agent-state.js";
import { killArgv } from "../../envs/sandbox/exec-wrapper.node.js";
import { SandboxError } from "../../envs/sandbox/types.js";
import type { EpisodeStorage } from "../db/stores.js";
import { harnessState } from "../model-endpoint/harness-reset.js";
import { MODEL_PREFIX } from "../routes/model-endpoint.js";

/** The agent's files in its container: its pid, output and exit code (the exit file appears once, whole, when it ends). */
const DIR = "/.edgegym";
const PID_FILE = `${DIR}/agent.pid`;
const LOG_FILE = `${DIR}/agent.log`;
const EXIT_FILE = `${DIR}/agent.exit`;
const INSTRUCTION_FILE = `${DIR}/instruction.md`;
/** What the episode keeps of the agent's output. */
const TAIL_BYTES = 16_384;
/** One wait for the exit file; between waits the runner looks at the episode (a limit or a close ends the agent). */
const WAIT_SLICE_MS = 5_000;

/**
 * Starts the command in its own session (so it outlives the exec that started it, and a
 * kill of that session reaches all of it), with no terminal, its output to the log file,
 * and its exit code written to a temporary file then renamed, so a reader never sees half
 * of it. Prints the session's pid.
 */
const START_SCRIPT = [
  `d=${DIR}`,
  'run=\'echo $$ > "$0/agent.pid"; sh -c "$EDGEGYM_AGENT_COMMAND" < /dev/null > "$0/agent.log" 2>&1; echo $? > "$0/agent.exit.tmp"; mv "$0/agent.exit.tmp" "$0/agent.exit"\'',
  'if command -v setsid > /dev/null 2>&1; then setsid sh -c "$run" "$d" < /dev/null > /dev/null 2>&1 & else sh -c "$run" "$d" < /dev/null > /dev/null 2>&1 & fi',
  `i=0; while [ ! -s "$d/agent.pid" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done`,
  'cat "$d/agent.pid"',
].join("\n");

const WAIT_SCRIPT = `while [ ! -e ${EXIT_FILE} ]; do sleep 0.2; done; cat ${EXIT_FILE}`;

/** How the agent ended, and the episode's stop reason for it. */
type Ending = { status: "exited" | "timed_out" | "stopped" | "lost"; stopReason: string | null; exitCode: number | null };

export interface AgentRunnerOptions {
  store: EpisodeStorage;
  registry: EnvRegistry;
  clock?: () => number;
  /** Where a container reaches the server's model endpoint (the egress network's gateway and the proxy's port). */
  gateway(): Promise<{ host: string; port: number }>;
  log?: (message: string) => void;
}

/**
 * Runs harness episodes' agents in their containers and ends each episode when its agent
 * ends. Nothing of a run is held only here: the agent's pid, output and exit code are
 * files in its container and its limits are in the episode, so a server that restarts
 * (or any other process on the database) picks up the watch where this one left it.
 */
export class AgentRunner {
  private readonly watching = new Set<string>();
  private closed = false;
  private readonly clock: () => number;
  private readonly log: (message: string) => void;

  constructor(private readonly options: AgentRunnerOptions) {
    this.clock = options.clock ?? Date.now;
    this.log = options.log ?? ((message) => console.warn(message));
  }

  /** Starts a new episode's agent (the reset waits for it, so its reply means the agent runs) and watches it. */
  async launch(episodeId: string, key: string): Promise<void> {
    const found = await this.target(episodeId);
    if (!found) return;
    const { agent, target } = found;
    const gateway = await this.options.gateway();
    const base = `http://${gateway.host}:${gateway.port}${MODEL_PREFIX}/${encodeURIComponent(episodeId)}`;
    const { provider, sandbox } = target;
    await provider.exec(sandbox.id, ["sh", "-c", `mkdir -p ${DIR} && chmod 1777 ${DIR}`], { timeoutMs: 15_000, maxOutputBytes: 4096, user: "0" });
    await provider.writeFile(sandbox.id, INSTRUCTION_FILE, target.instruction, { mode: 0o644 });
    const env: Record<string, string> = {
      ...target.env,
      OPENAI_BASE_URL: `${base}/v1`,
      OPENAI_API_BASE: `${base}/v1`,
      OPENAI_API_KEY: key,
      ANTHROPIC_BASE_URL: base,
      ANTHROPIC_API_KEY: key,
      EDGEGYM_INSTRUCTION: target.instruction,
      EDGEGYM_INSTRUCTION_FILE: INSTRUCTION_FILE,
      EDGEGYM_AGENT_COMMAND: agent.command,
      // The endpoint is the proxy's own address: a client that honours HTTP_PROXY must not send it through itself.
      NO_PROXY: gateway.host,
      no_proxy: gateway.host,
    };
    const started = await provider.exec(sandbox.id, ["sh", "-c", START_SCRIPT], {
      timeoutMs: 15_000,
      maxOutputBytes: 4096,
      env,
      ...(target.user ? { user: target.user } : {}),
      ...(target.workdir ? { workdir: target.workdir } : {}),
    });
    if (started.exitCode !== 0 || !/^\d+\s*$/.test(started.output)) {
      throw new SandboxError("sandbox_start_failed", `the agent did not start in the episode's container (exit ${started.exitCode}): ${started.output.slice(0, 500)}`);
    }
    this.watch(episodeId);
  }

  /** Watches an episode's agent until it ends (idempotent per process). */
  watch(episodeId: string): void {
    if (this.watching.has(episodeId) || this.closed) return;
    this.watching.add(episodeId);
    void this.follow(episodeId)
      .catch((err: unknown) => this.log(`agent of ${episodeId}: ${err instanceof Error ? err.message : String(err)}`))
      .finally(() => this.watching.delete(episodeId));
  }

  /** Stops watching (the agents keep running in their containers; the next server watches them again). */
  close(): void {
    this.closed = true;
  }

  private async target(episodeId: string): Promise<{ agent: AgentState; target: HarnessTarget; status: string; turn: number; state: unknown } | null> {
    const row = await this.options.store.get(episodeId);
    const agent = row ? harnessState(row.state) : null;
    const harness = row ? this.options.registry.get(row.envId)?.episodeResources?.harness : undefined;
    if (!row || !agent || !harness) return null;
    return { agent, target: harness.target(row.state as never), status: row.status, turn: row.turn, state: row.state };
  }

  private async follow(episodeId: string): Promise<void> {
    while (!this.closed) {
      const found = await this.target(episodeId);
      if (!found || found.agent.result) return;
      const { agent, target } = found;
      if (found.status !== "active") {
        // Ended by a limit, a close or the TTL: the agent goes too (a closed episode's container is gone already).
        const killed = found.status === "done" ? await this.kill(target) : false;
        return this.finish(episodeId, { status: killed ? "stopped" : "lost", stopReason: null, exitCode: null });
      }
      const remaining = (agent.startedAt ?? 0) + agent.timeoutSeconds * 1000 - this.clock();
      if (remaining <= 0) {
        await this.kill(target);
        return this.finish(episodeId, { status: "timed_out", stopReason: "agent_timeout", exitCode: null });
      }
      try {
        const waited = await target.provider.exec(target.sandbox.id, ["sh", "-c", WAIT_SCRIPT], { timeoutMs: Math.min(remaining, WAIT_SLICE_MS), maxOutputBytes: 64, user: "0" });
        if (!waited.timedOut && waited.exitCode === 0 && /^-?\d+\s*$/.test(waited.output)) {
          return this.finish(episodeId, { status: "exited", stopReason: "agent_exit", exitCode: Number(waited.output.trim()) });
        }
      } catch (err) {
        if (err instanceof SandboxError && err.code === "sandbox_lost") {
          // Gone with its container: a close (whose row says so on the next look) or a loss.
          const now = await this.target(episodeId);
          if (now && now.status === "active") return this.finish(episodeId, { status: "lost", stopReason: "sandbox_lost", exitCode: null });
          continue;
        }
        throw err;
      }
    }
  }

  /** Kills the agent's session; false when its container is gone. */
  private async kill(target: HarnessTarget): Promise<boolean> {
    try {
      const pid = await target.provider.exec(target.sandbox.id, ["cat", PID_FILE], { timeoutMs: 5_000, maxOutputBytes: 64, user: "0" });
      const n = Number(pid.output.trim());
      if (pid.exitCode === 0 && Number.isInteger(n) && n > 1) await target.provider.exec(target.sandbox.id, killArgv(n), { timeoutMs: 10_000, maxOutputBytes: 4096, user: "0" });
      return true;
    } catch (err) {
      if (err instanceof SandboxError && err.code === "sandbox_lost") return false;
      throw err;
    }
  }

  /** Stores how the agent ended (its output tail and time) and, if the episode still runs, ends it. */
  private async finish(episodeId: string, ending: Ending): Promise<void> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const found = await this.target(episodeId);
      if (!found || found.agent.result) return;
      let tail = "";
      try {
        const read = await found.target.provider.exec(found.target.sandbox.id, ["tail", "-c", String(TAIL_BYTES), LOG_FILE], { timeoutMs: 5_000, maxOutputBytes: TAIL_BYTES + 1024, user: "0" });
        if (read.exitCode === 0) tail = read.output;
      } catch {
        // The container is gone: no output to keep.
      }
      const seconds = Math.max(0, (this.clock() - (found.agent.startedAt ?? this.clock())) / 1000);
      const agent: AgentState = { ...found.agent, result: { status: ending.status, exitCode: ending.exitCode, outputTail: tail, seconds: Math.round(seconds * 1000) / 1000 } };
      const state = { ...(found.state as object), agent };
      const end = found.status === "active" && ending.stopReason ? { stopReason: ending.stopReason, truncated: ending.stopReason !== "agent_exit" } : null;
      if (await this.options.store.settleHead(episodeId, found.turn, state, end, this.clock())) return;
      if (found.status === "closed" || found.status === "expired") return;
    }
  }
}
