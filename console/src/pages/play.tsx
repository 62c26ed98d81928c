import { useEffect, useRef, useState } from "preact/hooks";
import type { AssistantMessage, Episode, ResetRequest, ScoreResponse, StepResponse } from "../../../src/protocol/index.js";
import { api, apiKey, errorText } from "../api.js";
import { Composer } from "../components/composer.js";
import { ScoreView } from "../components/score.js";
import { Transcript } from "../components/transcript.js";
import { curlScript, pythonScript, type PlayLog } from "../snippets.js";
import { href } from "../router.js";
import { PageState } from "../components/page-state.js";

const episodeUrl = (id: string): string => `/v1/episodes/${encodeURIComponent(id)}`;

/** What was done, read back from the stored episode: its reset (seed included, so it replays) and each assistant message. */
function logOf(ep: Episode, scored: boolean): PlayLog {
  const steps: Record<string, unknown>[] = [];
  let turn = 0;
  for (const m of ep.messages) if (m.role === "assistant") steps.push({ turn: turn++, message: m });
  const reset: Record<string, unknown> = { split: ep.split, index: ep.index, seed: ep.seed };
  if (Object.keys(ep.args).length) reset.args = ep.args;
  return { envId: ep.env_id, reset, steps, scored };
}

function CopyButton({ label, text }: { label: string; text: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      onClick={() => {
        void navigator.clipboard?.writeText(text).then(() => setDone(true), () => setDone(false));
      }}
    >
      {done ? "Copied" : label}
    </button>
  );
}

/**
 * Play an environment as the model would. The page starts an episode once, then puts its id
 * in the address (`?episode=…`), so a reload continues the same durable episode.
 */
export function Play({ envId, query }: { envId: string; query: URLSearchParams }) {
  const [episode, setEpisode] = useState<Episode | null>(null);
  const [score, setScore] = useState<ScoreResponse | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const scoreButton = useRef<HTMLButtonElement>(null);

  const reload = async (id: string): Promise<Episode> => {
    const ep = await api<Episode>("GET", episodeUrl(id));
    setEpisode(ep);
    if (ep.score) setScore({ episode_id: ep.episode_id, score: ep.score, scored_at: ep.updated_at });
    return ep;
  };

  useEffect(() => {
    const existing = query.get("episode");
    const start = async (): Promise<void> => {
      if (existing) {
        await reload(existing);
        return;
      }
      const body: ResetRequest = {};
      const split = query.get("split");
      if (split === "train" || split === "eval") body.split = split;
      const index = query.get("index");
      if (index) body.index = Number(index);
      const args = query.get("args");
      if (args) body.args = JSON.parse(args) as Record<string, unknown>;
      const reset = await api<{ episode_id: string }>("POST", `/v1/envs/${encodeURIComponent(envId)}/episodes`, body);
      history.replaceState(null, "", href(`/play/${encodeURIComponent(envId)}?episode=${encodeURIComponent(reset.episode_id)}`));
      await reload(reset.episode_id);
    };
    start().catch((err: unknown) => setError(errorText(err)));
  }, []);

  const step = async (message: AssistantMessage): Promise<boolean> => {
    if (!episode) return false;
    setBusy(true);
    setError(null);
    try {
      await api<StepResponse>("POST", `${episodeUrl(episode.episode_id)}/step`, { turn: episode.turn, message });
      const after = await reload(episode.episode_id);
      // The composer goes once the episode ends: the keyboard moves on to what comes next, scoring it.
      if (after.done) setTimeout(() => scoreButton.current?.focus(), 0);
      return true;
    } catch (err) {
      setError(errorText(err));
      return false;
    } finally {
      setBusy(false);
    }
  };

  const scoreIt = async (): Promise<void> => {
    if (!episode || busy) return;
    setBusy(true);
    try {
      setScore(await api<ScoreResponse>("POST", `${episodeUrl(episode.episode_id)}/score`));
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  if (!episode) return <PageState title={`Play ${envId}`} error={error} busy={`Starting ${envId}…`} />;
  const log = logOf(episode, score !== null);
  return (
    <>
      <h1>
        Play <a href={href(`/envs/${encodeURIComponent(envId)}`)}>{envId}</a>
      </h1>
      <p class="muted">
        episode <a href={href(`/episodes/${episode.episode_id}`)} data-testid="episode-id">{episode.episode_id}</a> · {episode.split} #{episode.index} · seed {episode.seed} · turn{" "}
        <span data-testid="turn">{episode.turn}</span> of {episode.max_turns} · <span data-testid="status">{episode.done ? `done (${episode.stop_reason ?? "stopped"})` : "active"}</span>
      </p>
      <Transcript messages={episode.messages} />
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
      {!episode.done ? <Composer tools={episode.tools} disabled={busy} onSend={step} /> : null}
      <div class="row">
        <button type="button" ref={scoreButton} onClick={() => void scoreIt()} aria-disabled={busy}>
          Score
        </button>
        <CopyButton label="Copy as curl" text={curlScript(location.origin, log, apiKey() !== null)} />
        <CopyButton label="Copy as Python" text={pythonScript(location.origin, log, apiKey() !== null)} />
      </div>
      {score ? <ScoreView score={score.score} /> : null}
      <details>
        <summary>curl</summary>
        <pre class="block" data-testid="curl">{curlScript(location.origin, log, apiKey() !== null)}</pre>
      </details>
      <details>
        <summary>Python</summary>
        <pre class="block" data-testid="python">{pythonScript(location.origin, log, apiKey() !== null)}</pre>
      </details>
    </>
  );
}
