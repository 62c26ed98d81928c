import type { Score } from "../../../src/protocol/index.js";

const fmt = (n: number): string => (Number.isInteger(n) ? String(n) : n.toFixed(3));

/**
 * The reward and each rubric component with its weight (a bar per score in [0, 1]). A
 * seated episode's top-level score is one seat's (the first a client plays): `seat` names it.
 */
export function ScoreView({ score, seat }: { score: Score; seat?: string | undefined }) {
  return (
    <section class="score" aria-label="score">
      <p class="reward">
        reward{seat ? ` of ${seat}` : ""} <strong data-testid="reward">{fmt(score.reward)}</strong>
      </p>
      <table>
        <thead>
          <tr>
            <th>component</th>
            <th>weight</th>
            <th>score</th>
            <th aria-hidden="true"></th>
          </tr>
        </thead>
        <tbody>
          {score.components.map((c) => (
            <tr key={c.name}>
              <td>{c.name}</td>
              <td>{fmt(c.weight)}</td>
              <td>
                {fmt(c.score)}
                {c.error ? <span class="error"> {c.error}</span> : null}
              </td>
              <td class="barcell" aria-hidden="true">
                <span class="bar" style={{ width: `${Math.max(0, Math.min(1, c.score)) * 100}%` }} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {Object.keys(score.metrics).length ? (
        <p class="muted">
          {Object.entries(score.metrics)
            .map(([k, v]) => `${k} ${fmt(v)}`)
            .join(" · ")}
        </p>
      ) : null}
    </section>
  );
}

/**
 * A seated episode's score per seat: who played it, its reward, and its figures (a game's
 * win, draw, loss, the seat's moves). The reward above is the first seat a person played.
 */
export function SeatScores({ score, seats }: { score: Score; seats: Record<string, string> | undefined }) {
  if (!score.seats) return null;
  return (
    <section aria-label="score per seat">
      <h2>Per seat</h2>
      <table data-testid="seat-scores">
        <thead>
          <tr>
            <th>seat</th>
            <th>player</th>
            <th>reward</th>
            <th>figures</th>
          </tr>
        </thead>
        <tbody>
          {Object.entries(score.seats).map(([seat, s]) => (
            <tr key={seat} data-seat={seat}>
              <td>{seat}</td>
              <td>{seats?.[seat] === undefined ? "" : seats[seat] === "client" ? "you" : seats[seat]}</td>
              <td data-testid={`seat-reward-${seat}`}>{fmt(s.reward)}</td>
              <td class="muted">
                {Object.entries(s.metrics)
                  .map(([k, v]) => `${k} ${fmt(v)}`)
                  .join(" · ")}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
