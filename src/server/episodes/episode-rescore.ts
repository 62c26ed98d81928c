import type { RescoreRequest, RescoreResponse, Score } from "../../protocol/index.js";
import { envContentHash, scoreEpisode, type EnvStamp, type EpisodeSnapshot } from "../../envs/index.js";
import type { ServerConfig } from "../context.js";
import { assertEnvVersion } from "./env-version.js";
import { ApiError } from "../errors.js";
import type { EpisodeService } from "./episode-service.js";
import type { Tenant } from "../tenants/keys.js";
import type { EpisodeStorage } from "../db/stores.js";

/** What a rescore reads about an episode: its transcript and final state, how it was stamped, whose it is. */
export interface StoredEpisode {
  snapshot: EpisodeSnapshot;
  stamp: EnvStamp;
  tenant: string;
  status: "active" | "done" | "closed" | "expired";
  expiresAt: number;
  ttlSeconds: number;
  score: Score | null;
}

/**
 * The one place a rescore reads an episode: the service's full snapshot (head and whole
 * transcript, a fork's prefix included), after its tenant (404) and expiry (410) checks.
 */
export async function readStoredEpisode(episodes: Pick<EpisodeService, "loadSnapshot">, viewer: Tenant, id: string): Promise<StoredEpisode> {
  const { row, snapshot } = await episodes.loadSnapshot(viewer, id);
  return {
    snapshot,
    stamp: { envVersion: row.envVersion, envHash: row.envHash },
    tenant: row.tenant,
    status: row.status,
    expiresAt: row.expiresAt,
    ttlSeconds: row.ttlSeconds,
    score: (row.score as Score | null) ?? null,
  };
}

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * `POST /v1/episodes/{id}/rescore`: runs a rubric over an episode's stored transcript and
 * final state. Never runs tools, `respond` or a model: the transcript is what it was.
 * The stored score stays unless the request says `save`.
 */
export class EpisodeRescorer {
  constructor(
    private readonly store: EpisodeStorage,
    private readonly episodes: Pick<EpisodeService, "env" | "loadSnapshot">,
    private readonly config: Pick<ServerConfig, "envVersionCheck">,
    private readonly clock: () => number,
  ) {}

  async rescore(viewer: Tenant, id: string, req: RescoreRequest): Promise<RescoreResponse> {
    const stored = await readStoredEpisode(this.episodes, viewer, id);
    const env = this.episodes.env(stored.snapshot.envId);
    // "episode": the rubric it was started on, which this server must still run; "current": whatever it runs now.
    const hash = req.rubric === "episode" ? await assertEnvVersion(env, stored.stamp, this.config.envVersionCheck) : await envContentHash(env);
    const score = await scoreEpisode(env, stored.snapshot);
    const now = this.clock();
    let saved = false;
    if (req.save) {
      // Only over the transcript that was scored: a step that landed meanwhile wins, and nothing is saved.
      saved = await this.store.replaceScore(id, stored.snapshot.turn, score, now, now + stored.ttlSeconds * 1000);
      if (!saved) {
        // The head is enough to say why: no transcript read.
        const latest = await this.store.get(id);
        if (!latest || latest.status === "expired" || latest.expiresAt <= this.clock()) throw new ApiError("episode_expired", `episode "${id}" expired while it was rescored; nothing was saved`);
        throw new ApiError("turn_conflict", `episode "${id}" moved to turn ${latest.turn} while it was rescored at turn ${stored.snapshot.turn}; nothing was saved, rescore it again`, {
          episode_turn: latest.turn,
        });
      }
    }
    return {
      episode_id: id,
      score,
      previous_score: stored.score,
      rubric: req.rubric,
      env_version: env.version,
      env_hash: hash,
      episode_env_version: stored.stamp.envVersion,
      episode_env_hash: (stored.stamp.envHash as RescoreResponse["episode_env_hash"]) ?? null,
      saved,
      scored_at: iso(now),
    };
  }
}
