import { useEffect, useState } from "preact/hooks";
import type { Episode } from "../../../src/protocol/index.js";
import { api, ApiFailure } from "../api.js";
import { ForkChildren } from "../components/forks.js";
import { AgentRunView, ModelCalls } from "../components/harness.js";
import { ScoreView, SeatScores } from "../components/score.js";
import { Transcript } from "../components/transcript.js";
import { href, navigate } from "../router.js";
import { useLoad, type Loaded } from "../use-load.js";
import { PageState } from "../components/page-state.js";
import { episodeToolFacts, transcriptEntries, type EpisodeToolFacts } from "../tool-calls.js";

export function EpisodeOpen() {
  const [id, setId] = useState("");
  return (
    <>
      <h1>Episodes</h1>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          if (id.trim()) navigate(`/episodes/${encodeURIComponent(id.trim())}`);
        }}
      >
        <label for="episode-id">Episode id</label>
        <input id="episode-id" value={id} placeholder="ep_…" onInput={(e) => setId(e.currentTarget.value)} />
        <button type="submit">Open</button>
      </form>
    </>
  );
}

/**
 * Which turn each message belongs to, from `turns[].message_count` (turn 0: the opening
 * messages), with the time since the turn before (`created_at`): the client's generation plus
 * the environment's reply.
 */
function turnNotes(ep: Episode): (string | undefined)[] {
  const notes: (string | undefined)[] = [];
  let previous: number | null = null;
  for (const t of ep.turns) {
    const at = Date.parse(t.created_at);
    const gap = previous === null ? "" : ` · +${((at - previous) / 1000).toFixed(2)} s`;
    previous = at;
    for (let i = 0; i < t.message_count; i++) {
      const tokens = t.sampled ? ` · ${t.sampled.token_ids.length} sampled tokens` : "";
      notes.push(i === 0 ? `turn ${t.turn}${gap}${tokens}` : undefined);
    }
  }
  return notes;
}

/** The header above a transcript with tool calls: the sandbox's facts the episode view carries, and what the calls did. */
function ToolFacts({ facts }: { facts: EpisodeToolFacts }) {
  return (
    <section class="facts" aria-labelledby="tool-facts" data-testid="tool-facts">
      <h2 id="tool-facts">{facts.title}</h2>
      <dl>
        {facts.facts.map((f) => (
          <div key={f.label}>
            <dt>{f.label}</dt>
            <dd>{f.value}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}

/**
 * A seated episode's episode: the whole log once it is done, one seat's view (`seat`)
 * on request. While it runs the server gives only one seat's view (the whole log holds
 * what one seat must not see of another), so the first client seat's is shown, with the
 * others a link away (the environment's own seats answer once the game is over).
 */
async function loadEpisode(episodeId: string, seat: string | null): Promise<{ ep: Episode; seats: string[] }> {
  const url = `/v1/episodes/${encodeURIComponent(episodeId)}`;
  if (seat) {
    const ep = await api<Episode>("GET", `${url}?seat=${encodeURIComponent(seat)}`);
    return { ep, seats: Object.keys(ep.seats ?? {}) };
  }
  try {
    const ep = await api<Episode>("GET", url);
    return { ep, seats: Object.keys(ep.seats ?? {}) };
  } catch (err) {
    const names = err instanceof ApiFailure && err.code === "seat_required" && Array.isArray(err.details?.seats) ? (err.details.seats as string[]) : null;
    // A client's seat first: the environment's own seats are shown once the game is over.
    const clients = err instanceof ApiFailure && Array.isArray(err.details?.client_seats) ? (err.details.client_seats as string[]) : names;
    const first = clients?.[0] ?? names?.[0];
    if (!names || first === undefined) throw err;
    return { ep: await api<Episode>("GET", `${url}?seat=${encodeURIComponent(first)}`), seats: names };
  }
}

/** Links to each seat's own conversation of a seated episode, and to the whole log once it is done. */
function SeatViews({ episodeId, ep, seats }: { episodeId: string; ep: Episode; seats: string[] }) {
  if (!seats.length) return null;
  const base = `/episodes/${encodeURIComponent(episodeId)}`;
  return (
    <nav class="row" aria-label="seats" data-testid="seat-views">
      <span class="muted">
        {Object.entries(ep.seats ?? {})
          .map(([seat, player]) => `${seat}: ${player}`)
          .join(" · ")}
        {ep.to_play ? ` · ${ep.to_play} to play` : ""}
      </span>
      {seats.map((seat) => (
        <a key={seat} href={href(`${base}?seat=${encodeURIComponent(seat)}`)} aria-current={ep.seat === seat ? "page" : undefined}>
          {seat}'s conversation
        </a>
      ))}
      {ep.status !== "active" ? (
        <a href={href(base)} aria-current={ep.seat === undefined ? "page" : undefined}>
          whole log
        </a>
      ) : null}
    </nav>
  );
}

export function EpisodePage({ episodeId, seat = null }: { episodeId: string; seat?: string | null }) {
  const [loaded, reload] = useLoad(() => loadEpisode(episodeId, seat), `${episodeId}|${seat ?? ""}`);
  const ep: Loaded<Episode> = loaded.state === "ok" ? { state: "ok", value: loaded.value.ep } : loaded;
  // A harness episode's calls come in while its agent runs: shown live.
  const running = ep.state === "ok" && ep.value.agent?.status === "running";
  useEffect(() => {
    if (!running) return undefined;
    const timer = setInterval(reload, 2000);
    return () => clearInterval(timer);
  }, [running]);
  if (ep.state !== "ok") return <PageState title={`Episode ${episodeId}`} error={ep.state === "error" ? ep.error : null} busy={`Loading ${episodeId}…`} />;
  const e = ep.value;
  const sampled = e.turns.filter((t) => t.sampled);
  const toolFacts = episodeToolFacts(e, transcriptEntries(e.messages));
  return (
    <>
      <h1>
        Episode <span class="muted">{e.episode_id}</span>
      </h1>
      <p>
        <a href={href(`/envs/${encodeURIComponent(e.env_id)}`)}>{e.env_id}</a> v{e.env_version} · {e.split} #{e.index} · seed {e.seed} · <span data-testid="status">{e.status}</span> · turn {e.turn} of {e.max_turns}
        {e.stop_reason ? ` · stopped: ${e.stop_reason}` : ""}
        {e.truncated ? " · truncated" : ""}
      </p>
      <p class="muted">
        started {e.created_at} · last activity {e.updated_at} ({((Date.parse(e.updated_at) - Date.parse(e.created_at)) / 1000).toFixed(2)} s after) · expires {e.expires_at}
      </p>
      {e.parent ? (
        <p data-testid="parent">
          forked from <a href={href(`/episodes/${encodeURIComponent(e.parent.episode_id)}`)}>{e.parent.episode_id}</a> after turn <span class="num">{e.parent.turn}</span>
          {" "}
          <span class="muted">(turns 0–{e.parent.turn} are the parent's)</span>
        </p>
      ) : null}
      {e.error ? <p class="error">{e.error}</p> : null}
      {Object.keys(e.args).length ? <pre class="block">args {JSON.stringify(e.args, null, 2)}</pre> : null}
      {e.status === "active" && !e.agent ? (
        <p>
          <a class="button" href={href(`/play/${encodeURIComponent(e.env_id)}?episode=${encodeURIComponent(e.episode_id)}${e.seats ? `&seats=${encodeURIComponent(JSON.stringify(e.seats))}` : ""}`)}>
            Continue playing
          </a>
        </p>
      ) : null}
      {loaded.state === "ok" ? <SeatViews episodeId={episodeId} ep={e} seats={loaded.value.seats} /> : null}
      {toolFacts ? <ToolFacts facts={toolFacts} /> : null}
      <AgentRunView episode={e} />
      <h2>{e.seat ? `Transcript: ${e.seat}'s conversation` : "Transcript"}</h2>
      <Transcript messages={e.messages} notes={turnNotes(e)} />
      <ModelCalls episode={e} />
      <h2>Score</h2>
      {e.score ? <ScoreView score={e.score} seat={Object.entries(e.seats ?? {}).find(([, player]) => player === "client")?.[0]} /> : <p class="muted">not scored</p>}
      {e.score ? <SeatScores score={e.score} seats={e.seats} /> : null}
      {sampled.length ? (
        <>
          <h2>Sampled tokens</h2>
          {sampled.map((t) => (
            <details key={t.turn}>
              <summary>
                turn {t.turn}: {t.sampled!.token_ids.length} token ids
                {t.sampled!.prompt_token_ids ? ` · ${t.sampled!.prompt_token_ids.length} prompt token ids` : ""} · template {t.sampled!.template_hash ?? "none (recorded by a proxy)"}
              </summary>
              <pre class="block">{JSON.stringify(t.sampled!.token_ids)}</pre>
              {t.sampled!.logprobs ? <pre class="block">logprobs {JSON.stringify(t.sampled!.logprobs.map((x) => Number(x.toFixed(4))))}</pre> : null}
            </details>
          ))}
        </>
      ) : null}
      <ForkChildren episodeId={e.episode_id} />
      {e.template_changes.length ? (
        <p class="error">
          template changed at turn{e.template_changes.length > 1 ? "s" : ""} {e.template_changes.map((t) => t.turn).join(", ")}
        </p>
      ) : null}
    </>
  );
}
