import type { AgentRun, AgentSpec, ModelEndpoint } from "../../protocol/index.js";
import type { AnyEnvironment } from "../../envs/index.js";
import { AgentState } from "../../envs/sandbox/agent-state.js";
import type { ServerConfig } from "../context.js";
import { ApiError } from "../errors.js";
import { isoTime } from "../episodes/iso-time.js";
import { modelEndpointUrls } from "../routes/model-endpoint.js";
import { episodeKeyHash, mintEpisodeKey } from "./episode-key.js";

/** What a reset with `agent` adds: the episode's key (returned once) and the agent's part of the state (its hash only). */
export async function prepareHarness(env: AnyEnvironment, spec: AgentSpec, config: ServerConfig, now: number): Promise<{ key: string; state: AgentState }> {
  if (!env.episodeResources?.harness) {
    throw new ApiError("env_unavailable", `${env.id} has no sandbox to run an agent in; \`agent\` needs a sandboxed environment (harbor:DIR)`);
  }
  if (!config.modelUpstreams.has(spec.upstream)) {
    const names = [...config.modelUpstreams.keys()];
    throw new ApiError("invalid_request", `no model upstream named "${spec.upstream}"; ${names.length ? `this server has: ${names.join(", ")}` : "this server has none (EDGEGYM_MODEL_UPSTREAMS)"}`, {
      issues: [{ path: ["agent", "upstream"], message: "unknown upstream" }],
    });
  }
  const key = mintEpisodeKey();
  return {
    key,
    state: {
      keyHash: await episodeKeyHash(key),
      upstream: spec.upstream,
      model: spec.model,
      command: spec.command,
      timeoutSeconds: spec.timeout_seconds,
      maxCalls: Math.min(spec.limits?.max_calls ?? config.agentMaxCalls, config.agentMaxCalls),
      maxTokens: Math.min(spec.limits?.max_tokens ?? config.agentMaxTokens, config.agentMaxTokens),
      // The reset starts the agent before it answers: its time runs from here.
      startedAt: now,
      pid: null,
      calls: 0,
      tokens: 0,
      result: null,
    },
  };
}

export function modelEndpoint(origin: string, episodeId: string, key: string): ModelEndpoint {
  const urls = modelEndpointUrls(origin, episodeId);
  return { openai_base_url: urls.openai, anthropic_base_url: urls.anthropic, api_key: key };
}

/** The agent's part of an episode's state, when it has one. */
export function harnessState(state: unknown): AgentState | null {
  const agent = (state as { agent?: unknown } | null)?.agent;
  if (agent === undefined) return null;
  const parsed = AgentState.safeParse(agent);
  return parsed.success ? parsed.data : null;
}

export function isHarnessState(state: unknown): boolean {
  return typeof state === "object" && state !== null && (state as { agent?: unknown }).agent !== undefined;
}

/** The episode view's `agent`, from the state (nothing for an episode without one). */
export function agentRunView(state: unknown): { agent?: AgentRun } {
  const agent = harnessState(state);
  if (!agent) return {};
  const result = agent.result;
  return {
    agent: {
      upstream: agent.upstream,
      model: agent.model,
      status: result ? result.status : "running",
      exit_code: result?.exitCode ?? null,
      output_tail: result?.outputTail ?? "",
      seconds: result ? result.seconds : null,
      calls: agent.calls,
      tokens: agent.tokens,
      started_at: isoTime(agent.startedAt ?? 0),
    },
  };
}
