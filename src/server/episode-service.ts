import type { AssistantMessage, ChatMessage, CloseResponse, Episode, ResetRequest, ResetResponse, Score, ScoreResponse, StepRequest, StepResponse } from "../protocol/index.js";
import { scoreEpisode, startEpisode, stepEpisode, type AnyEnvironment, type EnvRegistry, type EpisodeSnapshot } from "../envs/index.js";
import type { EpisodeStore, StepRow } from "./db/episode-store.js";
import type { EpisodeRow } from "./db/schema.js";
import type { ServerConfig } from "./context.js";
import { ApiError } from "./errors.js";

const iso = (ms: number): string => new Date(ms).toISOString();

function newEpisodeId(): string {
  return `ep_${crypto.randomUUID().replaceAll("-", "")}`;
}

/** A stable text form of a request, to tell a retry from a different request. */
function canonical(value: unknown): string {
  return JSON.stringify(value);
}

function toSnapshot(row: StepRow): EpisodeSnapshot {
  return {
    envId: row.envId,
    envVersion: row.envVersion,
    split: row.split,
    index: row.taskIndex,
    seed: row.seed,
    args: row.args,
    state: row.state,
    messages: row.messages as ChatMessage[],
    promptLength: row.promptLength,
    turn: row.turn,
    done: row.status !== "active",
    stopReason: row.stopReason,
    truncated: row.truncated,
    error: row.error,
  };
}

/** The assistant message sent at `turn` (0-based), read back from the transcript. */
function assistantMessageAt(row: EpisodeRow, turn: number): unknown {
  let seen = -1;
  for (const m of (row.messages as ChatMessage[]).slice(row.promptLength)) {
    if (m.role === "assistant" && ++seen === turn) return m;
  }
  return undefined;
}

/**
 * Reset, step, score and close, over the store. Nothing is kept between calls: each
 * loads the episode row, runs the environment, and writes back conditionally.
 */
export class EpisodeService {
  constructor(
    private readonly store: EpisodeStore,
    private readonly registry: EnvRegistry,
    private readonly config: ServerConfig,
    private readonly clock: () => number,
  ) {}

  env(id: string): AnyEnvironment {
    const env = this.registry.get(id);
    if (env) return env;
    const refusal = this.registry.refusal(id);
    if (refusal) throw new ApiError("env_unavailable", refusal);
    if (this.registry.isUnavailableHere(id)) {
      throw new ApiError("env_unavailable", `environment "${id}" cannot run on this server's runtime (${this.registry.runtime}); serve it from the Node build`);
    }
    throw new ApiError("env_not_found", `no environment "${id}"; GET /v1/envs lists them`);
  }

  private ttlMs(requested: number | undefined): number {
    return Math.min(requested ?? this.config.defaultTtlSeconds, this.config.maxTtlSeconds) * 1000;
  }

  async reset(envId: string, body: ResetRequest, idempotencyKey: string | undefined): Promise<{ response: ResetResponse; replayed: boolean }> {
    const env = this.env(envId);
    const snapshot = await startEpisode(env, body);
    const now = this.clock();
    const ttlMs = this.ttlMs(body.ttl_seconds);
    const { row, created } = await this.store.insert({
      id: newEpisodeId(),
      envId: env.id,
      envVersion: env.version,
      split: snapshot.split,
      taskIndex: snapshot.index,
      seed: snapshot.seed,
      args: snapshot.args,
      metadata: body.metadata ?? {},
      state: snapshot.state,
      messages: snapshot.messages,
      promptLength: snapshot.promptLength,
      replies: [],
      turn: 0,
      status: "active",
      stopReason: null,
      truncated: false,
      error: null,
      score: null,
      scoredAt: null,
      idempotencyKey: idempotencyKey ? `${env.id}:${idempotencyKey}` : null,
      requestHash: canonical(body),
      ttlSeconds: ttlMs / 1000,
      createdAt: now,
      updatedAt: now,
      expiresAt: now + ttlMs,
    });
    if (!created && row.requestHash !== canonical(body)) {
      throw new ApiError("idempotency_key_reused", "this Idempotency-Key was used for a reset with a different body; use a new key");
    }
    return {
      replayed: !created,
      response: {
        episode_id: row.id,
        env_id: row.envId,
        env_version: row.envVersion,
        split: row.split,
        index: row.taskIndex,
        seed: row.seed,
        turn: 0,
        messages: (row.messages as ChatMessage[]).slice(0, row.promptLength),
        tools: env.toolDefinitionsFor?.(row.state) ?? env.toolDefinitions(),
        done: false,
        max_turns: env.maxTurnsFor?.(row.state) ?? env.maxTurns,
        expires_at: iso(row.expiresAt),
      },
    };
  }

  /** Loads a live episode: 404 when unknown, 410 when its TTL has passed (reaped or not yet). */
  private async load(id: string): Promise<EpisodeRow> {
    return this.live(id, await this.store.get(id));
  }

  private live<Row extends StepRow>(id: string, row: Row | undefined): Row {
    if (!row) throw new ApiError("episode_not_found", `no episode "${id}"`);
    if (row.status === "expired" || row.expiresAt <= this.clock()) {
      throw new ApiError("episode_expired", `episode "${id}" expired at ${iso(row.expiresAt)}; start a new one`);
    }
    return row;
  }

  /** A step already applied: the stored reply when it is the same message, 409 otherwise. */
  private replay(row: EpisodeRow, req: StepRequest): string {
    const stored = row.replies[req.turn];
    if (stored !== undefined && canonical(assistantMessageAt(row, req.turn)) === canonical(req.message)) return stored;
    throw new ApiError("turn_conflict", `episode is at turn ${row.turn}; turn ${req.turn} was already taken with a different message`, {
      episode_turn: row.turn,
    });
  }

  /** Returns the response body as the exact JSON text stored for the turn. */
  async step(id: string, req: StepRequest): Promise<string> {
    const row = this.live(id, await this.store.getForStep(id));
    // A retry reads the whole row again: the stored replies are left out of the step's read.
    if (req.turn < row.turn) return this.replay(await this.load(id), req);
    if (req.turn > row.turn) {
      throw new ApiError("turn_conflict", `episode is at turn ${row.turn}, the step was for turn ${req.turn}`, { episode_turn: row.turn });
    }
    if (row.status === "closed") throw new ApiError("episode_closed", `episode "${id}" was closed`);
    if (row.status === "done") throw new ApiError("episode_done", `episode "${id}" is done (${row.stopReason ?? "finished"}); score it or start a new one`);
    const env = this.env(row.envId);
    const { snapshot, reply } = await stepEpisode(env, toSnapshot(row), req.message as AssistantMessage);
    const now = this.clock();
    const expiresAt = now + row.ttlSeconds * 1000;
    const response: StepResponse = {
      episode_id: row.id,
      turn: snapshot.turn,
      messages: reply,
      done: snapshot.done,
      stop_reason: snapshot.stopReason,
      truncated: snapshot.truncated,
      expires_at: iso(expiresAt),
    };
    const body = JSON.stringify(response);
    const won = await this.store.commitStep({
      id: row.id,
      expectedTurn: row.turn,
      turn: snapshot.turn,
      state: snapshot.state,
      messages: snapshot.messages,
      reply: body,
      status: snapshot.done ? "done" : "active",
      stopReason: snapshot.stopReason,
      truncated: snapshot.truncated,
      error: snapshot.error,
      now,
      expiresAt,
    });
    if (won) return body;
    // Another request moved the episode first: the same message is a retry that raced us.
    const latest = await this.load(id);
    if (latest.turn > req.turn) return this.replay(latest, req);
    if (latest.status === "closed") throw new ApiError("episode_closed", `episode "${id}" was closed`);
    throw new ApiError("turn_conflict", `episode "${id}" changed while this step ran; fetch it and retry`, { episode_turn: latest.turn });
  }

  async get(id: string): Promise<Episode> {
    const row = await this.load(id);
    const env = this.registry.get(row.envId);
    return {
      episode_id: row.id,
      env_id: row.envId,
      env_version: row.envVersion,
      split: row.split,
      index: row.taskIndex,
      seed: row.seed,
      args: row.args,
      status: row.status,
      turn: row.turn,
      max_turns: (env && (env.maxTurnsFor?.(row.state) ?? env.maxTurns)) ?? row.turn,
      done: row.status !== "active",
      stop_reason: row.stopReason,
      truncated: row.truncated,
      error: row.error,
      messages: row.messages as ChatMessage[],
      tools: (env && (env.toolDefinitionsFor?.(row.state) ?? env.toolDefinitions())) ?? [],
      score: (row.score as Score | null) ?? null,
      metadata: row.metadata,
      created_at: iso(row.createdAt),
      updated_at: iso(row.updatedAt),
      expires_at: iso(row.expiresAt),
    };
  }

  /** Scores once; later calls return the stored score. Scoring an active episode ends it. */
  async score(id: string): Promise<ScoreResponse> {
    let row = await this.load(id);
    if (row.score == null) {
      const score = await scoreEpisode(this.env(row.envId), toSnapshot(row));
      const now = this.clock();
      await this.store.saveScore(id, score, now, now + row.ttlSeconds * 1000);
      row = await this.load(id);
    }
    return { episode_id: row.id, score: row.score as Score, scored_at: iso(row.scoredAt ?? row.updatedAt) };
  }

  async close(id: string): Promise<CloseResponse> {
    const row = await this.store.get(id);
    if (!row) throw new ApiError("episode_not_found", `no episode "${id}"`);
    if (row.status !== "expired" && row.expiresAt > this.clock()) await this.store.close(id, this.clock());
    const after = await this.store.get(id);
    const status = after && after.expiresAt <= this.clock() ? "expired" : (after?.status ?? "closed");
    return { episode_id: id, status };
  }
}
