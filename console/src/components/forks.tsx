import { useEffect, useState } from "preact/hooks";
import type { EpisodeFork, ForkList } from "../../../src/protocol/index.js";
import { api, errorText } from "../api.js";
import { href } from "../router.js";

const PAGE = 50;

/**
 * The episodes forked from this one (GET …/forks), a page at a time: each links to its own
 * page with where it branched off, its status and its reward. Shows nothing when there are none.
 */
export function ForkChildren({ episodeId }: { episodeId: string }) {
  const [forks, setForks] = useState<EpisodeFork[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const load = async (from: string | null): Promise<void> => {
    setBusy(true);
    try {
      const page = await api<ForkList>("GET", `/v1/episodes/${encodeURIComponent(episodeId)}/forks?limit=${PAGE}${from ? `&cursor=${encodeURIComponent(from)}` : ""}`);
      setForks((before) => (from ? [...before, ...page.forks] : page.forks));
      setCursor(page.next_cursor);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  useEffect(() => void load(null), [episodeId]);

  if (error) return <p class="error">forks: {error}</p>;
  if (forks.length === 0) return null;
  return (
    <section aria-labelledby="forks-heading">
      <h2 id="forks-heading">Forks</h2>
      <div class="scroll">
        <table data-testid="forks">
          <thead>
            <tr>
              <th>episode</th>
              <th>forked after turn</th>
              <th>turn</th>
              <th>status</th>
              <th>reward</th>
            </tr>
          </thead>
          <tbody>
            {forks.map((f) => (
              <tr key={f.episode_id}>
                <td>
                  <a href={href(`/episodes/${encodeURIComponent(f.episode_id)}`)}>{f.episode_id}</a>
                </td>
                <td class="num">{f.fork_turn}</td>
                <td class="num">{f.turn}</td>
                <td>{f.status}</td>
                <td class="num">{f.reward === null ? <span class="muted">not scored</span> : f.reward.toFixed(3)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {cursor ? (
        // aria-disabled rather than disabled: a disabled button would drop the keyboard focus while the page loads.
        <button type="button" aria-disabled={busy} onClick={() => !busy && void load(cursor)}>
          More forks
        </button>
      ) : null}
    </section>
  );
}
