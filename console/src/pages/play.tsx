import { useEffect, useRef, useState } from "preact/hooks";
import type { AssistantMessage, EnvInfo, Episode, ResetRequest, ScoreResponse, StepRequest, StepResponse } from "../../../src/protocol/index.js";
import { api, apiKey, ApiFailure, errorText } from "../api.js";
import { Composer } from "../components/composer.js";
import { ScoreView, SeatScores } from "../components/score.js";
import { Transcript } from "../components/transcript.js";
import { curlScript, pythonScript, type PlayLog } from "../snippets.js";
import { href } from "../router.js";
import { PageState } from "../components/page-state.js";
import { assignmentOf, CLIENT, clientSeats, playerLabel, seatedSteps, seatsParam } from "../seats.js";

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

/** The same for a seated episode: the reset names the seats, and each step its seat, in the order they were taken. */
function seatedLogOf(ep: Episode, views: Readonly<Record<string, Episode>>, info: EnvInfo, scored: boolean): PlayLog {
  const reset: Record<string, unknown> = { split: ep.split, index: ep.index, seed: ep.seed };
  if (Object.keys(ep.args).length) reset.args = ep.args;
  const defaults = assignmentOf(info, null);
  const changed = Object.fromEntries(Object.entries(ep.seats ?? {}).filter(([seat, player]) => defaults[seat] !== player));
  if (Object.keys(changed).length) reset.seats = changed;
  return { envId: ep.env_id, reset, steps: seatedSteps(views).map(({ turn, seat, message }) => ({ turn, message, seat })), scored };
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

/** The seats of an episode in one line: who plays each, and whose turn it is. */
function SeatLine({ info, ep }: { info: EnvInfo; ep: Episode }) {
  return (
    <p>
      <span data-testid="seats">
        {(info.seats ?? []).map((s, i) => (
          <span key={s.name}>
            {i ? " · " : ""}
            <strong>{s.name}</strong> {playerLabel(ep.seats?.[s.name] ?? "?")}
          </span>
        ))}
      </span>{" "}
      ·{" "}
      <span data-testid="to-play" aria-live="polite">
        {ep.to_play && !ep.done ? `${ep.to_play} to play${ep.seats?.[ep.to_play] === CLIENT ? " (you)" : ""}` : "game over"}
      </span>
    </p>
  );
}

/**
 * Play an environment as the model would. The page starts an episode once, then puts its id
 * in the address (`?episode=…`), so a reload continues the same durable episode. A seated
 * environment's episode is played seat by seat: the page shows the conversation of the
 * seat to play (each seat sees only its own), sends each message for that seat, and lets
 * you look at the other seats you play. The environment's policies move on their own.
 */
export function Play({ envId, query }: { envId: string; query: URLSearchParams }) {
  const [info, setInfo] = useState<EnvInfo | null>(null);
  const [episode, setEpisode] = useState<Episode | null>(null);
  // A seated episode's: the conversation of each seat you play, and the one shown.
  const [views, setViews] = useState<Record<string, Episode>>({});
  const [viewSeat, setViewSeat] = useState<string | null>(null);
  const [score, setScore] = useState<ScoreResponse | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const scoreButton = useRef<HTMLButtonElement>(null);
  const seated = !!info?.seats?.length;

  const seen = (ep: Episode): void => {
    if (ep.score) setScore({ episode_id: ep.episode_id, score: ep.score, scored_at: ep.updated_at });
  };

  /** Each seat you play, as that seat sees it; the one shown follows the turn while the game runs. */
  const reloadSeated = async (env: EnvInfo, id: string, assignment: Record<string, string>): Promise<Episode> => {
    const mine = clientSeats(env, assignment);
    const got = await Promise.all(mine.map((seat) => api<Episode>("GET", `${episodeUrl(id)}?seat=${encodeURIComponent(seat)}`)));
    const next = Object.fromEntries(mine.map((seat, i) => [seat, got[i] as Episode]));
    const any = got[0] as Episode;
    setViews(next);
    setViewSeat((shown) => (any.to_play && any.seats?.[any.to_play] === CLIENT ? any.to_play : (shown ?? mine[0] ?? null)));
    setEpisode(any);
    seen(any);
    return any;
  };

  const reload = async (env: EnvInfo, id: string, assignment: Record<string, string> | null): Promise<Episode> => {
    if (env.seats?.length) return reloadSeated(env, id, assignment ?? (await seatsOf(env, id)));
    const ep = await api<Episode>("GET", episodeUrl(id));
    setEpisode(ep);
    seen(ep);
    return ep;
  };

  useEffect(() => {
    const existing = query.get("episode");
    const start = async (): Promise<void> => {
      const env = await api<EnvInfo>("GET", `/v1/envs/${encodeURIComponent(envId)}`);
      setInfo(env);
      const requested = seatsParam(query.get("seats"));
      if (existing) {
        await reload(env, existing, requested && env.seats?.length ? assignmentOf(env, requested) : null);
        return;
      }
      const body: ResetRequest = {};
      const split = query.get("split");
      if (split === "train" || split === "eval") body.split = split;
      const index = query.get("index");
      if (index) body.index = Number(index);
      const args = query.get("args");
      if (args) body.args = JSON.parse(args) as Record<string, unknown>;
      if (requested && env.seats?.length) body.seats = requested;
      const reset = await api<{ episode_id: string }>("POST", `/v1/envs/${encodeURIComponent(envId)}/episodes`, body);
      // The seats go in the address too: a reload knows which seats are yours without asking for another's view.
      const assignment = env.seats?.length ? assignmentOf(env, requested) : null;
      const q = new URLSearchParams({ episode: reset.episode_id });
      if (assignment) q.set("seats", JSON.stringify(assignment));
      history.replaceState(null, "", href(`/play/${encodeURIComponent(envId)}?${q}`));
      await reload(env, reset.episode_id, assignment);
    };
    start().catch((err: unknown) => setError(errorText(err)));
  }, []);

  const step = async (message: AssistantMessage): Promise<boolean> => {
    if (!episode || !info) return false;
    setBusy(true);
    setError(null);
    try {
      const body: StepRequest = { turn: episode.turn, message, ...(seated && viewSeat ? { seat: viewSeat } : {}) };
      await api<StepResponse>("POST", `${episodeUrl(episode.episode_id)}/step`, body);
      const after = await reload(info, episode.episode_id, episode.seats ?? null);
      // The composer goes once the episode ends: the keyboard moves on to what comes next, scoring it.
      if (after.done) setTimeout(() => scoreButton.current?.focus(), 0);
      return true;
    } catch (err) {
      setError(errorText(err));
      if (err instanceof ApiFailure && err.code === "not_your_turn") await reload(info, episode.episode_id, episode.seats ?? null).catch(() => {});
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

  if (!episode || !info) return <PageState title={`Play ${envId}`} error={error} busy={`Starting ${envId}…`} />;
  const shown = seated && viewSeat ? (views[viewSeat] ?? episode) : episode;
  const mine = seated ? Object.keys(views) : [];
  const canMove = !episode.done && (!seated || (viewSeat !== null && viewSeat === episode.to_play));
  const log = seated ? seatedLogOf(episode, views, info, score !== null) : logOf(episode, score !== null);
  return (
    <>
      <h1>
        Play <a href={href(`/envs/${encodeURIComponent(envId)}`)}>{envId}</a>
      </h1>
      <p class="muted">
        episode <a href={href(`/episodes/${episode.episode_id}`)} data-testid="episode-id">{episode.episode_id}</a> · {episode.split} #{episode.index} · seed {episode.seed} · turn{" "}
        <span data-testid="turn">{episode.turn}</span> of {episode.max_turns} · <span data-testid="status">{episode.done ? `done (${episode.stop_reason ?? "stopped"})` : "active"}</span>
      </p>
      {seated ? <SeatLine info={info} ep={episode} /> : null}
      {mine.length > 1 ? (
        <div class="row" role="group" aria-label="conversation shown">
          {mine.map((seat) => (
            <button key={seat} type="button" aria-pressed={viewSeat === seat} onClick={() => setViewSeat(seat)}>
              {seat}'s conversation{episode.to_play === seat ? " (to play)" : ""}
            </button>
          ))}
        </div>
      ) : null}
      {seated && viewSeat ? (
        <h2 class="seat-heading" data-testid="view-seat">
          {viewSeat}'s conversation
        </h2>
      ) : null}
      <Transcript messages={shown.messages} />
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
      {canMove ? <Composer key={viewSeat ?? ""} tools={episode.tools} disabled={busy} onSend={step} /> : null}
      {!episode.done && !canMove && episode.to_play ? (
        <p class="muted">
          {episode.to_play} is to play.{" "}
          {views[episode.to_play] ? (
            <button type="button" class="link" onClick={() => setViewSeat(episode.to_play ?? null)}>
              Show {episode.to_play}'s conversation
            </button>
          ) : null}
        </p>
      ) : null}
      <div class="row">
        <button type="button" ref={scoreButton} onClick={() => void scoreIt()} aria-disabled={busy}>
          Score
        </button>
        <CopyButton label="Copy as curl" text={curlScript(location.origin, log, apiKey() !== null)} />
        <CopyButton label="Copy as Python" text={pythonScript(location.origin, log, apiKey() !== null)} />
      </div>
      {score ? <ScoreView score={score.score} seat={seated ? mine[0] : undefined} /> : null}
      {score ? <SeatScores score={score.score} seats={episode.seats} /> : null}
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

/**
 * Who plays each seat of an episode opened without its seats in the address (a link from
 * elsewhere): read from the view of a seat a client may take, tried in the environment's
 * order. The finished episode's whole log says it without any seat's view.
 */
async function seatsOf(env: EnvInfo, id: string): Promise<Record<string, string>> {
  try {
    const whole = await api<Episode>("GET", episodeUrl(id));
    if (whole.seats) return whole.seats;
  } catch (err) {
    if (!(err instanceof ApiFailure && err.code === "seat_required")) throw err;
    // The refusal names the seats clients play: read through one (an environment's seat answers only once the game is over).
    const clients = Array.isArray(err.details?.client_seats) ? (err.details.client_seats as string[]) : [];
    if (clients[0] !== undefined) {
      const view = await api<Episode>("GET", `${episodeUrl(id)}?seat=${encodeURIComponent(clients[0])}`);
      if (view.seats) return view.seats;
    }
  }
  for (const seat of env.seats ?? []) {
    if (!seat.players.includes(CLIENT)) continue;
    const view = await api<Episode>("GET", `${episodeUrl(id)}?seat=${encodeURIComponent(seat.name)}`);
    if (view.seats) return view.seats;
  }
  return assignmentOf(env, null);
}
