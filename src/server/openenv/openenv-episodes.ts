import type { AssistantMessage, Episode, StepResponse } from "../../protocol/index.js";
import type { OpenEnvAction, OpenEnvCallTool, OpenEnvMcpTool, OpenEnvResetData, OpenEnvResult, OpenEnvState } from "../../protocol/openenv.js";
import type { EpisodeService } from "../episodes/episode-service.js";
import { ApiError } from "../errors.js";
import type { Tenant } from "../tenants/keys.js";

/**
 * OpenEnv's reset / step / state over edgegym's durable episodes. Both the HTTP routes and
 * the WebSocket session call this, so the two transports answer alike. Every call goes
 * through EpisodeService: an OpenEnv step is a native step (same turn check, same stored
 * reply on a retry), and the reward is the stored rubric score, computed once when the
 * episode ends.
 */
export class OpenEnvEpisodes {
  constructor(private readonly service: EpisodeService) {}

  /** A new episode, or with `episode_id` (alone) the existing one, to continue after a reconnect. */
  async reset(viewer: Tenant, envId: string, data: OpenEnvResetData): Promise<OpenEnvResult> {
    const { episode_id: resumeId, ...fresh } = data;
    if (resumeId !== undefined) {
      const extra = Object.keys(fresh);
      if (extra.length > 0) {
        throw new ApiError("invalid_request", `reset with episode_id continues that episode; send it alone (also got ${extra.join(", ")})`, {
          issues: extra.map((key) => ({ path: [key], message: "not accepted beside episode_id" })),
        });
      }
      return this.resume(viewer, envId, resumeId);
    }
    const { response } = await this.service.reset(viewer, envId, fresh, undefined);
    return {
      observation: {
        episode_id: response.episode_id,
        env_id: response.env_id,
        turn: response.turn,
        messages: response.messages,
        tools: response.tools,
        max_turns: response.max_turns,
        split: response.split,
        index: response.index,
        seed: response.seed,
        stop_reason: null,
        truncated: false,
        resumed: false,
        score: null,
        expires_at: response.expires_at,
      },
      reward: null,
      done: response.done,
    };
  }

  /** The whole transcript and where the episode stands: what a client needs to rebuild its model's context. */
  private async resume(viewer: Tenant, envId: string, id: string): Promise<OpenEnvResult> {
    const episode = sameEnv(await this.service.get(viewer, id), envId);
    const score = episode.done ? (episode.score ?? (await this.service.score(viewer, id)).score) : null;
    return {
      observation: {
        episode_id: episode.episode_id,
        env_id: episode.env_id,
        turn: episode.turn,
        messages: episode.messages,
        tools: episode.tools,
        max_turns: episode.max_turns,
        split: episode.split,
        index: episode.index,
        seed: episode.seed,
        stop_reason: episode.stop_reason,
        truncated: episode.truncated,
        resumed: true,
        score,
        expires_at: episode.expires_at,
      },
      reward: score?.reward ?? null,
      done: episode.done,
    };
  }

  /**
   * One native step at `turn`; when it ends the episode, the rubric runs and its total is
   * the reward. A `call_tool` action is an assistant message with that one tool call (id
   * `call_<turn>`), and its answer carries the tool's output as `result`, as openenv-core's
   * CallToolObservation does. With `envId` (the HTTP route's path, which names the
   * episode anew on every request) an episode of another environment is refused before
   * anything is applied; a socket is bound to its environment at reset and passes none.
   */
  async step(viewer: Tenant, id: string, turn: number, action: OpenEnvAction | OpenEnvCallTool, signal?: AbortSignal, envId?: string): Promise<OpenEnvResult> {
    if (envId !== undefined) sameEnv(await this.service.get(viewer, id, { from_turn: 0, limit: 1 }), envId);
    let message: AssistantMessage;
    let callId: string | undefined;
    if ("type" in action) {
      callId = `call_${turn}`;
      message = { role: "assistant", content: null, tool_calls: [{ id: callId, type: "function", function: { name: action.tool_name, arguments: JSON.stringify(action.arguments ?? {}) } }] };
    } else {
      const { turn: _turn, metadata: _metadata, role: _role, ...fields } = action;
      message = { role: "assistant", ...fields };
    }
    const body = await this.service.step(viewer, id, { turn, message }, signal);
    const reply = JSON.parse(body) as StepResponse;
    // Scoring is stored, so a retried final step answers with the same reward.
    const score = reply.done ? (await this.service.score(viewer, id)).score : null;
    const toolReply = callId === undefined ? undefined : reply.messages.find((m) => m.role === "tool" && m.tool_call_id === callId);
    return {
      observation: {
        episode_id: reply.episode_id,
        turn: reply.turn,
        messages: reply.messages,
        ...("type" in action ? { tool_name: action.tool_name, result: toolReply?.content ?? null, error: null } : {}),
        stop_reason: reply.stop_reason,
        truncated: reply.truncated,
        resumed: false,
        score,
        ...(reply.template_change ? { template_change: reply.template_change } : {}),
        expires_at: reply.expires_at,
      },
      reward: score?.reward ?? null,
      done: reply.done,
    };
  }

  /** openenv-core's `list_tools`: the episode's tools (the environment's before any reset) in MCP's shape; no turn is taken. */
  async listTools(viewer: Tenant, envId: string, id: string | undefined): Promise<OpenEnvResult> {
    const episode = id === undefined ? undefined : sameEnv(await this.service.get(viewer, id, { from_turn: 0, limit: 1 }), envId);
    const definitions = episode?.tools ?? this.service.env(envId).toolDefinitions();
    const tools: OpenEnvMcpTool[] = definitions.map((t) => ({ name: t.function.name, description: t.function.description ?? "", input_schema: (t.function.parameters ?? {}) as Record<string, unknown> }));
    return {
      observation: { episode_id: episode?.episode_id ?? null, turn: episode?.turn ?? 0, tools },
      reward: episode?.score?.reward ?? null,
      done: episode?.done ?? false,
    };
  }

  /** OpenEnv's State for an episode; before any reset (a fresh socket) only the environment is known. */
  async state(viewer: Tenant, envId: string, id: string | undefined): Promise<OpenEnvState> {
    if (id === undefined) return { episode_id: null, step_count: 0, env_id: envId };
    // Only turn 0 is read: the head is what State reports, not the transcript.
    const episode = sameEnv(await this.service.get(viewer, id, { from_turn: 0, limit: 1 }), envId);
    return {
      episode_id: episode.episode_id,
      step_count: episode.turn,
      env_id: episode.env_id,
      status: episode.status,
      turn: episode.turn,
      max_turns: episode.max_turns,
      done: episode.done,
      stop_reason: episode.stop_reason,
      truncated: episode.truncated,
      score: episode.score,
      expires_at: episode.expires_at,
    };
  }
}

/**
 * The episode, when it is one of `envId`: every route under `/openenv/{env_id}` acts on
 * that environment's episodes only, so an id of another's is refused (400, naming the
 * right base URL) rather than stepped or read there.
 */
function sameEnv(episode: Episode, envId: string): Episode {
  if (episode.env_id !== envId) {
    throw new ApiError("invalid_request", `episode "${episode.episode_id}" belongs to environment "${episode.env_id}"; reconnect to /openenv/${episode.env_id}`, {
      issues: [{ path: ["episode_id"], message: `episode of ${episode.env_id}` }],
    });
  }
  return episode;
}
