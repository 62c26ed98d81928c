import type { Score } from "../../../src/protocol/index.js";

const fmt = (n: number): string => (Number.isInteger(n) ? String(n) : n.toFixed(3));

/** The reward and each rubric component with its weight (a bar per score in [0, 1]). */
export function ScoreView({ score }: { score: Score }) {
  return (
    <section class="score" aria-label="score">
      <p class="reward">
        reward <strong data-testid="reward">{fmt(score.reward)}</strong>
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
