import type { EvalSummary } from "../../../src/protocol/index.js";

/** Reward histogram as an SVG bar chart (readable without colour: each bar is labelled with its count). */
export function Histogram({ bins, label }: { bins: EvalSummary["histogram"]; label: string }) {
  const max = Math.max(1, ...bins.map((b) => b.count));
  const w = 320;
  const h = 120;
  const bw = bins.length ? w / bins.length : w;
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${w} ${h + 30}`} role="img" aria-label={`${label}: ${bins.map((b) => `${b.lo.toFixed(2)}–${b.hi.toFixed(2)}: ${b.count}`).join(", ")}`}>
        {bins.map((b, i) => {
          const bh = (b.count / max) * h;
          return (
            <g key={i}>
              <rect x={i * bw + 1} y={h - bh} width={bw - 2} height={bh} class="hbar" />
              {b.count ? (
                <text x={i * bw + bw / 2} y={h - bh - 2} text-anchor="middle" class="hlabel">
                  {b.count}
                </text>
              ) : null}
            </g>
          );
        })}
        <line x1={0} y1={h} x2={w} y2={h} class="axis" />
        <text x={0} y={h + 16} class="hlabel">
          {bins[0]?.lo.toFixed(2) ?? ""}
        </text>
        <text x={w} y={h + 16} text-anchor="end" class="hlabel">
          {bins[bins.length - 1]?.hi.toFixed(2) ?? ""}
        </text>
      </svg>
      <figcaption>{label}</figcaption>
    </figure>
  );
}

/** Horizontal bars for named values in [0, 1] (component means, pass@k) or counts (stop conditions). */
export function Bars({ rows, max }: { rows: [string, number][]; max?: number }) {
  const top = max ?? Math.max(1e-9, ...rows.map(([, v]) => v));
  return (
    <table class="bars">
      <tbody>
        {rows.map(([name, v]) => (
          <tr key={name}>
            <th scope="row">{name}</th>
            <td class="num">{Number.isInteger(v) ? v : v.toFixed(3)}</td>
            <td class="barcell" aria-hidden="true">
              <span class="bar" style={{ width: `${Math.max(0, Math.min(1, v / top)) * 100}%` }} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
