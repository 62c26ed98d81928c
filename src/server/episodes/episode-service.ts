import type {
  AssistantMessage,
  ChatMessage,
  CloseResponse,
  Episode,
  EpisodeQuery,
  EpisodeTurn,
  ForkList,
  ForkListQuery,
  ForkRequest,
  ForkResponse,
  ResetRequest,
  ResetResponse,
  SampledTokens,
  Score,
  ScoreResponse,
  StepRequest,
  StepResponse,
  TemplateChange,
} from "../../protocol/index.js";
import { envContentHash, episodeMaxTurns, episodeTools, episodeView, historyNotLoaded, needsHistory, scoreEpisode, startEpisode, stepEpisode, type AnyEnvironment, type EnvRegistry, type EpisodeSnapshot } from "../../envs/index.js";
import { seatedReply, seatedView, seatFields, sameStepMessage } from "./seated-episodes.js";
import { TOMBSTONE_MS, type ForkHead, type StepRow, type TurnRecord } from "../db/episode-store.js";
import type { EpisodeRow } from "../db/schema.js";
import type { ServerConfig } from "../context.js";
import { assertEnvVersion } from "./env-version.js";
import { listForks } from "./episode-forks.js";
import { ApiError } from "../errors.js";
import { resolvedEnv } from "./resolve-env.js";
import { forkLineage, MAX_FORK_DEPTH, turnOwner, turnSegments, type TranscriptOwner } from "./lineage.js";
import { canSee, type Tenant } from "../tenants/keys.js";
import { EpisodeQuotas } from "../tenants/episode-quotas.js";
import { utf8Length } from "../tenants/quotas.js";
import type { EpisodeStorage } from "../db/stores.js";
import { isoTime } from "./iso-time.js";
import { newEpisodeId } from "./episode-id.js";
import type { ReleaseReason } from "../../envs/index.js";
import type { ModelCall } from "../../protocol/index.js";
import { agentRunView, harnessState, isHarnessState, modelEndpoint, prepareHarness } from "../model-endpoint/harness-reset.js";

const iso = isoTime;

/** A stable text form of a request, to tell a retry from a different request. */
function canonical(value: unknown): string {
  return JSON.stringify(value);
}

/** How many template changes an episode records; past it the trajectory is already flagged, and the list must stay small on the head. */
const MAX_TEMPLATE_CHANGES = 64;

function toSnapshot(row: StepRow, messages: ChatMessage[]): EpisodeSnapshot {
  return {
    envId: row.envId,
    envVersion: row.envVersion,
    split: row.split,
    index: row.taskIndex,
    seed: row.seed,
    args: row.args,
    state: row.state,
    messages,
    promptLength: row.promptLength,
    turn: row.turn,
    done: row.status !== "active",
    stopReason: row.stopReason,
    truncated: row.truncated,
    error: row.error,
    tallies: row.stopTallies,
  };
}

/** The messages a turn contributes: turn 0 the opening messages, any other its assistant message then the reply. */
function turnMessages(t: TurnRecord): ChatMessage[] {
  const reply = t.replyMessages as ChatMessage[];
  return t.turn === 0 || t.message == null ? reply : [t.message as ChatMessage, ...reply];
}

/**
 * Reset, step, score and close, over the store. Nothing is kept between calls: each
 * loads the episode row, runs the environment, and writes back conditionally.
 */
export class EpisodeService {
  private readonly quotas: EpisodeQuotas;

  constructor(
    private readonly store: EpisodeStorage,
    private readonly registry: EnvRegistry,
    private readonly config: ServerConfig,
    private readonly clock: () => number,
    /** Starts a new harness episode's agent (Node: the agent runner); without it a reset with `agent` is refused. */
    private readonly agents?: (episodeId: string, key: string) => Promise<void>,
  ) {
    this.quotas = new EpisodeQuotas(store, config.quotas, clock);
  }

  env(id: string): AnyEnvironment {
    return resolvedEnv(this.registry, id);
  }

  private ttlMs(requested: number | undefined): number {
    return Math.min(requested ?? this.config.defaultTtlSeconds, this.config.maxTtlSeconds) * 1000;
  }

  /**
   * A new episode. `episodeId` is for a wire whose client names its session before it says
   * which task (ORS mints the id at /create_session); with it, give an idempotency key too,
   * so a retried create finds the episode instead of colliding with it.
   */
  async reset(viewer: Tenant, envId: string, body: ResetRequest, idempotencyKey: string | undefined, episodeId?: string, origin?: string): Promise<{ response: ResetResponse; replayed: boolean }> {
    this.quotas.takeResetToken(viewer.name);
    const env = this.env(envId);
    // Checked before setup makes a container: an unknown upstream or an env without sandboxes is the request's fault.
    const harness = body.agent ? await prepareHarness(env, body.agent, this.config, this.clock()) : null;
    // The Worker runs no agents: refused before a container is started for nothing.
    if (harness && !this.agents) throw new ApiError("invalid_request", "this server runs no agent harnesses (they need the Node server's agent runner); reset without `agent`, or use the Node server");
    // Picked before setup, so resources setup makes (a container) carry their owner's id.
    const id = episodeId ?? newEpisodeId();
    const { agent: _agent, ...startBody } = body;
    const snapshot = await startEpisode(env, { ...startBody, episodeId: id, tenant: viewer.name, harness: harness !== null });
    if (harness) snapshot.state = { ...(snapshot.state as object), agent: harness.state };
    const metadataBytes = utf8Length(JSON.stringify(body.metadata ?? {}));
    const rowBytes = metadataBytes + utf8Length(JSON.stringify(snapshot.args)) + utf8Length(JSON.stringify(snapshot.messages)) + utf8Length(JSON.stringify(snapshot.state ?? null));
    await this.quotas.admitReset(viewer.name, metadataBytes, rowBytes);
    const envHash = await envContentHash(env);
    const now = this.clock();
    const ttlMs = this.ttlMs(body.ttl_seconds);
    // Scoped by tenant (names have no "/"), so one tenant's key never returns another's episode.
    const scopedKey = idempotencyKey ? `${viewer.name}/${env.id}:${idempotencyKey}` : null;
    if (episodeId !== undefined) {
      // A chosen id another episode has (another tenant's, or one made without this key) is refused, not overwritten.
      const taken = await this.store.get(episodeId);
      if (taken && (scopedKey === null || taken.idempotencyKey !== scopedKey)) throw new ApiError("invalid_request", `episode id "${episodeId}" is already taken; open a new session`);
    }
    const { row, created } = await this.store.insert({
      id,
      envId: env.id,
      envVersion: env.version,
      envHash,
      split: snapshot.split,
      taskIndex: snapshot.index,
      seed: snapshot.seed,
      args: snapshot.args,
      metadata: body.metadata ?? {},
      state: snapshot.state,
      promptLength: snapshot.promptLength,
      turn: 0,
      status: "active",
      stopReason: null,
      truncated: false,
      error: null,
      score: null,
      scoredAt: null,
      idempotencyKey: scopedKey,
      requestHash: canonical(body),
      ttlSeconds: ttlMs / 1000,
      createdAt: now,
      updatedAt: now,
      expiresAt: now + ttlMs,
      tenant: viewer.name,
      storedBytes: rowBytes,
      stopTallies: snapshot.tallies ?? null,
    }, snapshot.messages);
    // A replayed reset ran setup again: what that made is nobody's (the stored episode has its own).
    if (!created) await this.release(env, snapshot.state, "duplicate");
    if (!created && row.requestHash !== canonical(body)) {
      throw new ApiError("idempotency_key_reused", "this Idempotency-Key was used for a reset with a different body; use a new key");
    }
    // A replayed harness reset cannot give the key again (only its hash is stored): the first reply had it.
    if (harness && !created) throw new ApiError("idempotency_key_reused", "a harness episode's reset cannot be replayed: its endpoint key was returned once, by the first reset; start a new episode");
    if (harness) await this.launchAgent(env, row.id, row.state, harness.key);
    return {
      replayed: !created,
      response: {
        episode_id: row.id,
        env_id: row.envId,
        env_version: row.envVersion,
        // A replayed reset returns the hash its episode was stored with (null only on rows from before hashes).
        env_hash: row.envHash ?? envHash,
        split: row.split,
        index: row.taskIndex,
        seed: row.seed,
        turn: 0,
        ...seatedReply(env, row.state, created ? snapshot.messages : await this.openingMessages(row.id), null),
        ...episodeView(env, row.state),
        done: false,
        expires_at: iso(row.expiresAt),
        ...(harness ? { model_endpoint: modelEndpoint(origin ?? "http://localhost", row.id, harness.key) } : {}),
      },
    };
  }

  /** Starts the agent of a stored harness episode; one that cannot start ends the episode and frees its container. */
  private async launchAgent(env: AnyEnvironment, id: string, state: unknown, key: string): Promise<void> {
    try {
      if (!this.agents) throw new Error("this server runs no agents (sandboxes need the Node server)");
      await this.agents(id, key);
    } catch (err) {
      await this.store.settleHead(id, 0, state, { stopReason: "agent_start_failed", truncated: true }, this.clock());
      await this.release(env, state, "closed");
      throw new ApiError("sandbox_start_failed", `the agent could not be started: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** The opening messages of an episode made by reset (its own turn 0). */
  private async openingMessages(id: string): Promise<ChatMessage[]> {
    const [opening] = await this.store.readTurns([{ episodeId: id, from: 0, to: 0 }]);
    return opening ? turnMessages(opening) : [];
  }

  /** Loads a live episode: 404 when unknown or another tenant's, 410 when its TTL has passed (reaped or not yet). */
  private async load(viewer: Tenant, id: string): Promise<EpisodeRow> {
    return this.live(viewer, id, await this.store.get(id));
  }

  /** Another tenant's episode answers exactly as an unknown id does, so ids cannot be probed. */
  private visible<Row extends StepRow>(viewer: Tenant, id: string, row: Row | undefined): Row {
    if (!row || !canSee(viewer, row.tenant)) throw new ApiError("episode_not_found", `no episode "${id}"`);
    return row;
  }

  private live<Row extends StepRow>(viewer: Tenant, id: string, found: Row | undefined): Row {
    const row = this.visible(viewer, id, found);
    if (row.status === "expired" || row.expiresAt <= this.clock()) {
      throw new ApiError("episode_expired", `episode "${id}" expired at ${iso(row.expiresAt)}; start a new one`);
    }
    return row;
  }

  /** Where an episode's turn rows are: its lineage (one read, only for a fork). */
  private async transcriptOwner(row: { id: string; parentId: string | null; forkTurn: number | null }): Promise<TranscriptOwner> {
    // An episode made by reset has no lineage rows (no read); a fork always has some.
    const lineage = row.parentId === null ? [] : await this.store.lineage(row.id);
    return { id: row.id, forkTurn: row.forkTurn, lineage };
  }

  /** The whole transcript up to the episode's current turn: what scoring (and rescoring) reads. */
  private async transcript(row: StepRow): Promise<ChatMessage[]> {
    const owner = await this.transcriptOwner(row);
    const turns = await this.store.readTurns(turnSegments(owner, 0, row.turn));
    return turns.flatMap(turnMessages);
  }

  /**
   * An episode's full snapshot (head and whole transcript, a fork's prefix included): the
   * one reader for what scores an episode. O(turns); never on the step path.
   */
  async loadSnapshot(viewer: Tenant, id: string): Promise<{ row: EpisodeRow; snapshot: EpisodeSnapshot }> {
    const row = await this.load(viewer, id);
    return { row, snapshot: toSnapshot(row, await this.transcript(row)) };
  }

  /** A step already applied: the stored reply when it is the same message, 409 otherwise. */
  private async replay(row: StepRow, req: StepRequest): Promise<string> {
    // A fork did not take the steps of its prefix: a step for one of those turns is a conflict.
    const own = req.turn >= (row.forkTurn ?? 0);
    const stored = own ? await this.store.turnForRetry(row.id, req.turn + 1) : undefined;
    if (stored?.reply != null && sameStepMessage(this.registry.get(row.envId), stored.message, req)) return stored.reply;
    throw new ApiError("turn_conflict", `episode is at turn ${row.turn}; turn ${req.turn} was already taken with a different message`, {
      episode_turn: row.turn,
    });
  }

  /**
   * Returns the response body as the exact JSON text stored for the turn. `signal` is the
   * request's: when the client goes away mid-step the tools stop and nothing is stored.
   * Reads the head only (no transcript, unless the environment declares it reads history)
   * and writes one turn row plus the head: the cost does not grow with the episode.
   */
  async step(viewer: Tenant, id: string, req: StepRequest, signal?: AbortSignal): Promise<string> {
    // The tenant is checked on the row the step reads anyway; the UPDATE below keys on the
    // id that row had, and an episode's tenant never changes.
    const row = this.live(viewer, id, await this.store.getForStep(id, req.turn));
    if (req.turn < row.turn) return this.replay(row, req);
    if (req.turn > row.turn) {
      throw new ApiError("turn_conflict", `episode is at turn ${row.turn}, the step was for turn ${req.turn}`, { episode_turn: row.turn });
    }
    if (row.status === "closed") throw new ApiError("episode_closed", `episode "${id}" was closed`);
    if (row.status === "done") throw new ApiError("episode_done", `episode "${id}" is done (${row.stopReason ?? "finished"}); score it or start a new one`);
    if (isHarnessState(row.state)) throw new ApiError("invalid_request", `episode "${id}" runs an agent harness: its turns are the agent's model calls, not steps; wait for it to end (GET it), then score it`);
    if (req.sampled?.logprobs !== undefined && req.sampled.logprobs.length !== req.sampled.token_ids.length) {
      throw new ApiError("invalid_request", `sampled.logprobs has ${req.sampled.logprobs.length} entries for ${req.sampled.token_ids.length} token ids; send one per token`, {
        issues: [{ path: ["sampled", "logprobs"], message: "one logprob per token id" }],
      });
    }
    const env = this.env(row.envId);
    await assertEnvVersion(env, row, this.config.envVersionCheck);
    const history = needsHistory(env, row.stopTallies) ? await this.transcript(row) : historyNotLoaded(env.id);
    const { snapshot, reply, message, seat } = await stepEpisode(env, toSnapshot(row, history), req.message as AssistantMessage, { signal, seat: req.seat });
    const now = this.clock();
    const expiresAt = now + row.ttlSeconds * 1000;
    const sampled: SampledTokens | undefined = req.sampled;
    const hash = sampled?.template_hash ?? null;
    const change: TemplateChange | undefined = hash !== null && row.templateHash !== null && hash !== row.templateHash ? { turn: snapshot.turn, from: row.templateHash, to: hash } : undefined;
    // A seated episode's reply is what the seat to play sees next; the log keeps every seat's messages (reply_messages).
    const shown = seat === undefined ? { messages: reply } : seatedReply(env, snapshot.state, snapshot.messages, snapshot.done ? seat : null);
    const response: StepResponse = {
      episode_id: row.id,
      turn: snapshot.turn,
      ...shown,
      done: snapshot.done,
      stop_reason: snapshot.stopReason,
      truncated: snapshot.truncated,
      expires_at: iso(expiresAt),
      ...(change ? { template_change: change } : {}),
    };
    const body = JSON.stringify(response);
    const messageJson = JSON.stringify(message);
    const replyMessagesJson = seat === undefined ? null : JSON.stringify(reply);
    // What the turn row holds: the message, the reply body (its messages are read from it),
    // the state after the turn and the sampled tokens. The state is stored per turn so a fork
    // from any turn starts exactly there (docs/long-horizon.md).
    const stateJson = JSON.stringify(snapshot.state ?? null);
    const addedBytes = utf8Length(body) + utf8Length(messageJson) + utf8Length(stateJson) + (sampled ? utf8Length(JSON.stringify(sampled)) : 0) + (replyMessagesJson ? utf8Length(replyMessagesJson) : 0);
    const maxEpisodeBytes = this.quotas.maxEpisodeBytes;
    // The owner's bytes, whoever steps (an admin key included).
    const admitting = this.quotas.admitStepBytes(row.tenant, addedBytes);
    if (admitting) await admitting;
    const won = await this.store.commitStep({
      id: row.id,
      before: row,
      expectedTurn: row.turn,
      turn: snapshot.turn,
      state: snapshot.state,
      stateJson,
      message,
      messageJson,
      reply: body,
      replyMessagesJson,
      sampled: sampled ?? null,
      templateHash: hash ?? row.templateHash,
      templateChanges: change && row.templateChanges.length < MAX_TEMPLATE_CHANGES ? [...row.templateChanges, change] : null,
      tallies: snapshot.tallies ?? null,
      status: snapshot.done ? "done" : "active",
      stopReason: snapshot.stopReason,
      truncated: snapshot.truncated,
      error: snapshot.error,
      now,
      expiresAt,
      addedBytes,
      maxEpisodeBytes,
    });
    if (won) {
      if (snapshot.done) this.quotas.episodeEnded(row.tenant);
      return body;
    }
    // Another request moved the episode first: the same message is a retry that raced us.
    const latest = this.live(viewer, id, await this.store.getForStep(id));
    if (latest.turn > req.turn) return this.replay(latest, req);
    if (latest.status === "closed") throw new ApiError("episode_closed", `episode "${id}" was closed`);
    if (latest.turn === row.turn && latest.status === "active" && latest.storedBytes + addedBytes > maxEpisodeBytes) throw this.quotas.episodeFull(latest.storedBytes, addedBytes);
    throw new ApiError("turn_conflict", `episode "${id}" changed while this step ran; fetch it and retry`, { episode_turn: latest.turn });
  }

  /** The episode with the turns `from_turn` .. `from_turn + limit - 1` (default: all from `from_turn`). */
  async get(viewer: Tenant, id: string, query: EpisodeQuery = {}): Promise<Episode> {
    const row = await this.load(viewer, id);
    const env = this.registry.get(row.envId);
    const from = query.from_turn ?? 0;
    const to = query.limit === undefined ? row.turn : Math.min(row.turn, from + query.limit - 1);
    // Checked before any read: a seat that does not exist, or a live seated log asked for whole.
    const view = seatedView(env, row, query.seat);
    const owner = await this.transcriptOwner(row);
    const records = from <= to ? await this.store.readTurns(turnSegments(owner, from, to)) : [];
    const messages: ChatMessage[] = [];
    const turns: EpisodeTurn[] = [];
    for (const record of records) {
      const own = view.filter(turnMessages(record));
      messages.push(...own);
      turns.push({
        turn: record.turn,
        message_count: own.length,
        sampled: (record.sampled as SampledTokens | null) ?? null,
        ...(record.call ? { call: record.call as ModelCall } : {}),
        created_at: new Date(record.createdAt).toISOString(),
      });
    }
    return {
      episode_id: row.id,
      env_id: row.envId,
      env_version: row.envVersion,
      env_hash: row.envHash,
      split: row.split,
      index: row.taskIndex,
      seed: row.seed,
      args: row.args,
      status: row.status,
      turn: row.turn,
      max_turns: env ? episodeMaxTurns(env, row.state) : row.turn,
      done: row.status !== "active",
      stop_reason: row.stopReason,
      truncated: row.truncated,
      error: row.error,
      messages,
      from_turn: from,
      next_from_turn: to < row.turn ? to + 1 : null,
      turns,
      template_changes: row.templateChanges,
      parent: row.parentId !== null && row.forkTurn !== null ? { episode_id: row.parentId, turn: row.forkTurn } : null,
      tools: env ? episodeTools(env, row.state) : [],
      ...(env ? seatFields(env, row.state, row.status !== "active") : {}),
      ...(view.seat === undefined ? {} : { seat: view.seat }),
      score: (row.score as Score | null) ?? null,
      ...agentRunView(row.state),
      metadata: row.metadata,
      created_at: iso(row.createdAt),
      updated_at: iso(row.updatedAt),
      expires_at: iso(row.expiresAt),
    };
  }

  /**
   * Starts `n` episodes from the state after the parent's turn `turn`. Nothing of the
   * prefix is copied: each fork stores its head and lineage rows that point at the turn
   * rows it shares. The state is read from the turn row (stored per turn), so a fork starts
   * exactly where the parent was, whatever its tools did.
   */
  async fork(viewer: Tenant, id: string, body: ForkRequest, idempotencyKey: string | undefined): Promise<{ response: ForkResponse; replayed: boolean }> {
    const parent = await this.load(viewer, id);
    const n = body.n ?? 1;
    const turn = body.turn ?? parent.turn;
    // The body as sent: a replay after the parent moved on (no `turn` given) is still the same request.
    const requestHash = canonical({ fork: parent.id, ...body });
    const keys = idempotencyKey ? Array.from({ length: n }, (_, i) => `${parent.tenant}/fork/${parent.id}:${idempotencyKey}#${i}`) : null;
    const env = this.env(parent.envId);
    const answer = (rows: { id: string; expiresAt: number }[], at: number): ForkResponse => ({
      parent: { episode_id: parent.id, turn: at },
      episodes: rows.map((r) => ({ episode_id: r.id, expires_at: iso(r.expiresAt) })),
      turn: at,
      ...episodeView(env, parent.state),
    });
    const earlier = async (): Promise<{ response: ForkResponse; replayed: boolean } | undefined> => {
      if (!keys) return undefined;
      const rows = await this.store.getByIdempotencyKeys(keys);
      if (rows.some((r) => r.requestHash !== requestHash)) {
        throw new ApiError("idempotency_key_reused", "this Idempotency-Key was used for a fork with a different body; use a new key");
      }
      if (rows.length !== n) {
        // Fewer rows of this very body (n is in it), made less than a tombstone week ago, so
        // no sibling can have been reaped: an earlier try claimed the keys and stored only
        // some forks (the Durable Object store writes one object per fork). insertForks
        // stores the rest under the claimed ids. The atomic stores never get here.
        if (rows.every((r) => this.clock() - r.createdAt < TOMBSTONE_MS)) return undefined;
        throw new ApiError("idempotency_key_reused", "some episodes this Idempotency-Key forked are deleted; use a new key");
      }
      return { response: answer(rows, rows[0]?.forkTurn ?? turn), replayed: true };
    };
    const replayed = await earlier();
    if (replayed) return replayed;

    // A fork runs the environment on the parent's stored state: the same version check as a step.
    await assertEnvVersion(env, parent, this.config.envVersionCheck);
    if (turn > parent.turn) throw new ApiError("turn_conflict", `episode is at turn ${parent.turn}; cannot fork after turn ${turn}`, { episode_turn: parent.turn });
    const resources = env.episodeResources;
    if (isHarnessState(parent.state)) {
      throw new ApiError("fork_unavailable", `episode "${id}" runs an agent harness: its agent's process cannot be forked with its container; start a new episode`, { reason: "harness" });
    }
    if (resources && !resources.fork) {
      // A container is not in the row: a fork would share the parent's box, or start from nothing.
      throw new ApiError("fork_unavailable", `episodes of ${env.id} own resources outside the database (a container) that forks cannot copy; start a new episode instead`, { reason: "resources" });
    }
    if (resources && turn !== parent.turn) {
      // A container holds its files as they are now, not as they were: an earlier turn cannot be rebuilt exactly.
      throw new ApiError(
        "fork_unavailable",
        `episodes of ${env.id} own a container, which only holds its files as they are now (turn ${parent.turn}); fork at the current turn, or start a new episode`,
        { reason: "resources_history", episode_turn: parent.turn },
      );
    }
    const owner = await this.transcriptOwner(parent);
    const lineage = forkLineage(owner, turn);
    if (lineage.length > MAX_FORK_DEPTH) {
      throw new ApiError("fork_unavailable", `forking here would read turns from ${lineage.length} episodes, past the limit of ${MAX_FORK_DEPTH}; fork from an episode nearer the root`, { reason: "too_deep", limit: MAX_FORK_DEPTH });
    }
    const point = await this.store.forkPoint(turnOwner(owner, turn), turn);
    if (!point) throw new ApiError("fork_unavailable", `the turns of episode "${id}" up to ${turn} are no longer stored`, { reason: "turn_missing" });
    if (point.done) throw new ApiError("episode_done", `episode "${id}" ended at turn ${turn}; fork from an earlier turn`);
    if (!point.stateStored) {
      throw new ApiError("fork_unavailable", `the state after turn ${turn} of episode "${id}" was not stored (the turn predates per-turn storage); fork from its current turn`, { reason: "state_not_stored" });
    }

    const metadata = body.metadata ?? {};
    const metadataBytes = utf8Length(JSON.stringify(metadata));
    const rowBytes = metadataBytes + utf8Length(JSON.stringify(parent.args)) + utf8Length(JSON.stringify(point.state ?? null));
    // Forks are episodes of the parent's owner: its reset rate, open-episode and byte quotas count them.
    this.quotas.takeResetToken(parent.tenant);
    await this.quotas.admitReset(parent.tenant, metadataBytes, rowBytes, n);
    const now = this.clock();
    const ttlMs = body.ttl_seconds === undefined ? parent.ttlSeconds * 1000 : this.ttlMs(body.ttl_seconds);
    const ids = Array.from({ length: n }, (_, i) => ({ id: newEpisodeId(), idempotencyKey: keys?.[i] ?? null }));
    // Copies of the parent's container, one per fork, taken from the head (the current turn): each fork names its own.
    const copies = resources?.fork ? await resources.fork(parent.state, { episodeIds: ids.map((f) => f.id), tenant: parent.tenant }) : null;
    const forks: ForkHead[] = ids.map((f, i) => (copies ? { ...f, state: copies[i] } : f));
    const inserted = await this.store.insertForks(
      {
        id: "",
        envId: parent.envId,
        envVersion: parent.envVersion,
        envHash: parent.envHash,
        split: parent.split,
        taskIndex: parent.taskIndex,
        seed: parent.seed,
        args: parent.args,
        metadata,
        state: point.state,
        promptLength: parent.promptLength,
        turn,
        status: "active",
        stopReason: null,
        truncated: false,
        error: null,
        score: null,
        scoredAt: null,
        idempotencyKey: null,
        requestHash,
        ttlSeconds: ttlMs / 1000,
        createdAt: now,
        updatedAt: now,
        expiresAt: now + ttlMs,
        tenant: parent.tenant,
        storedBytes: rowBytes,
        parentId: parent.id,
        forkTurn: turn,
        templateHash: point.templateHash,
        templateChanges: parent.templateChanges.filter((c) => c.turn <= turn),
        stopTallies: point.tallies,
      },
      forks,
      lineage,
    );
    if (inserted.length === n) return { response: answer(forks.map((f) => ({ id: f.id, expiresAt: now + ttlMs })), turn), replayed: false };
    // A request with the same key got there first: the copies made for this one belong to no episode.
    if (copies) for (const copy of copies) await this.release(env, copy, "duplicate");
    const raced = await earlier();
    if (raced) return raced;
    throw new Error(`fork of ${parent.id}: ${inserted.length} of ${n} episodes inserted`);
  }

  /** A page of the episodes forked from this one (episode-forks.ts). */
  async forks(viewer: Tenant, id: string, query: ForkListQuery): Promise<ForkList> {
    return listForks(this.store, viewer, id, query, this.clock());
  }

  /** Scores once; later calls return the stored score. Scoring an active episode ends it. */
  async score(viewer: Tenant, id: string): Promise<ScoreResponse> {
    let row = await this.load(viewer, id);
    if (row.score == null) {
      // The tests must not run while the agent still works in the same box: wait for its end (or close the episode).
      const agent = harnessState(row.state);
      if (agent && !agent.result && row.status === "active") {
        throw new ApiError("agent_running", `episode "${id}"'s agent is still running (${agent.calls} calls so far); score it once it is done (GET it: status "done"), or close it`);
      }
      const env = this.env(row.envId);
      // A rubric of another version would mix versions into the stored reward; …/rescore says which it uses.
      await assertEnvVersion(env, row, this.config.envVersionCheck);
      const score = await scoreEpisode(env, toSnapshot(row, await this.transcript(row)));
      const now = this.clock();
      await this.store.saveScore(id, score, now, now + row.ttlSeconds * 1000);
      if (row.status === "active") this.quotas.episodeEnded(row.tenant);
      row = await this.load(viewer, id);
      // Scored is over: the rubric was the last reader of the episode's resources.
      await this.release(env, row.state, "scored");
    }
    return { episode_id: row.id, score: row.score as Score, scored_at: iso(row.scoredAt ?? row.updatedAt) };
  }

  /** The episode's outside resources freed; a failure is logged, and the sandbox sweep retries it. */
  private async release(env: AnyEnvironment, state: unknown, reason: ReleaseReason): Promise<void> {
    if (!env.episodeResources) return;
    try {
      await env.episodeResources.release(state, reason);
    } catch (err) {
      console.error(`${env.id}: releasing an episode's resources (${reason}) failed; the sweep will retry:`, err);
    }
  }

  async close(viewer: Tenant, id: string): Promise<CloseResponse> {
    const row = this.visible(viewer, id, await this.store.get(id));
    if (row.status !== "expired" && row.expiresAt > this.clock()) {
      await this.store.close(id, this.clock());
      if (row.status === "active") this.quotas.episodeEnded(row.tenant);
      if (row.status !== "closed") await this.release(this.env(row.envId), row.state, "closed");
    }
    const after = await this.store.get(id);
    const status = after && after.expiresAt <= this.clock() ? "expired" : (after?.status ?? "closed");
    return { episode_id: id, status };
  }
}
