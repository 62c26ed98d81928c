import { useEffect, useState } from "preact/hooks";
import type { EvalJob, EvalJobList, EvalProgress, EvalRollout, EvalSummary } from "../../../src/protocol/index.js";
import { api, apiText, errorText } from "../api.js";
import { Bars, Histogram } from "../components/charts.js";
import { Transcript } from "../components/transcript.js";
import { href, navigate } from "../router.js";
import { followEval } from "../sse.js";
import { useLoad } from "../use-load.js";
import { PageState } from "../components/page-state.js";

const evalUrl = (id: string): string => `/v1/evals/${encodeURIComponent(id)}`;
const pct = (n: number): string => `${(n * 100).toFixed(1)}%`;

async function loadRollouts(id: string): Promise<EvalRollout[]> {
  const text = await apiText("GET", `${evalUrl(id)}/results`);
  return text
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as EvalRollout);
}

export function EvalList() {
  const [jobs] = useLoad(() => api<EvalJobList>("GET", "/v1/evals?limit=200"), "evals");
  const [picked, setPicked] = useState<string[]>([]);
  if (jobs.state !== "ok") return <PageState title="Evaluations" error={jobs.state === "error" ? jobs.error : null} busy="Loading evaluations…" />;
  const toggle = (id: string): void => setPicked(picked.includes(id) ? picked.filter((p) => p !== id) : [...picked.slice(-1), id]);
  return (
    <>
      <h1>Evaluations</h1>
      {jobs.value.evals.length === 0 ? <p class="muted">No evaluation jobs yet (POST /v1/evals, or `edgegym view RUN_DIR` for runs on disk).</p> : null}
      <div class="row">
        <button disabled={picked.length !== 2} onClick={() => navigate(`/evals/compare?a=${encodeURIComponent(picked[0] ?? "")}&b=${encodeURIComponent(picked[1] ?? "")}`)}>
          Compare the two picked
        </button>
      </div>
      <div class="scroll">
        <table>
          <thead>
            <tr>
              <th>pick</th>
              <th>job</th>
              <th>env</th>
              <th>model</th>
              <th>status</th>
              <th>progress</th>
              <th>mean reward</th>
              <th>created</th>
            </tr>
          </thead>
          <tbody>
            {jobs.value.evals.map((j) => (
              <tr key={j.eval_id}>
                <td>
                  <input type="checkbox" aria-label={`pick ${j.eval_id}`} checked={picked.includes(j.eval_id)} onChange={() => toggle(j.eval_id)} />
                </td>
                <td>
                  <a href={href(`/evals/${encodeURIComponent(j.eval_id)}`)}>{j.eval_id}</a>
                </td>
                <td>{j.env_id}</td>
                <td>{j.model}</td>
                <td>{j.status}</td>
                <td>
                  {j.progress.done}/{j.progress.total}
                </td>
                <td>{j.summary ? j.summary.reward.mean.toFixed(3) : (j.progress.mean_reward?.toFixed(3) ?? "–")}</td>
                <td>{j.created_at.replace("T", " ").slice(0, 19)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

function ProgressBar({ progress, status }: { progress: EvalProgress; status: string }) {
  return (
    <div class="progress-wrap">
      <progress max={progress.total} value={progress.done} aria-label="rollouts done" />
      <span data-testid="eval-progress">
        {status} · {progress.done}/{progress.total} rollouts · {progress.errors} errors
        {progress.mean_reward !== null ? ` · mean reward ${progress.mean_reward.toFixed(3)}` : ""}
        {progress.rollouts_per_second !== null ? ` · ${progress.rollouts_per_second.toFixed(2)}/s` : ""}
      </span>
    </div>
  );
}

export function SummaryView({ summary }: { summary: EvalSummary }) {
  return (
    <div class="grid2">
      <section>
        <h2>Reward</h2>
        <p>
          mean <strong data-testid="mean-reward">{summary.reward.mean.toFixed(3)}</strong> · std {summary.reward.std.toFixed(3)} · min {summary.reward.min.toFixed(3)} · max {summary.reward.max.toFixed(3)}
        </p>
        <Histogram bins={summary.histogram} label={`reward over ${summary.rollouts} rollouts`} />
        <h2>Components (mean)</h2>
        <Bars rows={summary.components.map((c) => [`${c.name} ×${c.weight}`, c.mean])} max={1} />
      </section>
      <section>
        <h2>pass@k</h2>
        {Object.keys(summary.pass_at_k).length ? <Bars rows={Object.entries(summary.pass_at_k).map(([k, v]) => [`pass@${k}`, v])} max={1} /> : <p class="muted">one rollout per example</p>}
        <p class="muted">threshold {summary.pass_threshold}</p>
        <h2>Stop reasons</h2>
        <Bars rows={Object.entries(summary.stop_conditions)} />
        <h2>Tokens and time</h2>
        <p>
          {summary.usage.input_tokens} in / {summary.usage.output_tokens} out (mean {summary.usage.mean_input_tokens.toFixed(0)} / {summary.usage.mean_output_tokens.toFixed(0)}) ·{" "}
          {summary.model_length_stops} hit the token limit · errors {pct(summary.error_rate)} · {(summary.wall_ms / 1000).toFixed(1)} s wall
        </p>
      </section>
    </div>
  );
}

/** Per example: mean reward, and the best and worst rollouts, each opening its transcript. */
export function ExampleTable({ rollouts }: { rollouts: readonly EvalRollout[] }) {
  const byExample = new Map<number, EvalRollout[]>();
  for (const r of rollouts) byExample.set(r.example_id, [...(byExample.get(r.example_id) ?? []), r]);
  const [open, setOpen] = useState<EvalRollout | null>(null);
  const pick = (r: EvalRollout, label: string) => (
    <button class="link" onClick={() => setOpen(open === r ? null : r)} aria-expanded={open === r}>
      {label} {r.reward.toFixed(3)}
    </button>
  );
  return (
    <section>
      <h2>Examples</h2>
      <div class="scroll">
        <table data-testid="examples">
          <thead>
            <tr>
              <th>example</th>
              <th>rollouts</th>
              <th>mean</th>
              <th>best</th>
              <th>worst</th>
              <th>stops</th>
            </tr>
          </thead>
          <tbody>
            {[...byExample].map(([id, rs]) => {
              const sorted = [...rs].sort((a, b) => b.reward - a.reward);
              const best = sorted[0]!;
              const worst = sorted[sorted.length - 1]!;
              return (
                <tr key={id}>
                  <td>#{id}</td>
                  <td>{rs.length}</td>
                  <td>{(rs.reduce((s, r) => s + r.reward, 0) / rs.length).toFixed(3)}</td>
                  <td>{pick(best, "best")}</td>
                  <td>{sorted.length > 1 ? pick(worst, "worst") : "–"}</td>
                  <td>{[...new Set(rs.map((r) => r.stop_condition ?? r.error?.error ?? "?"))].join(", ")}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {open ? (
        <div class="rollout" aria-label="rollout">
          <h3>
            example #{open.example_id}, rollout {open.rollout_index}: reward {open.reward.toFixed(3)}
            {open.episode_id ? (
              <>
                {" "}
                · <a href={href(`/episodes/${encodeURIComponent(open.episode_id)}`)}>episode</a>
              </>
            ) : null}
          </h3>
          <p class="muted">
            {open.components.map((c) => `${c.name} ${c.score.toFixed(3)}×${c.weight}`).join(" · ")} · {open.token_usage.input_tokens}/{open.token_usage.output_tokens} tokens · {open.timing.total_ms.toFixed(0)} ms
            {open.error ? ` · error ${open.error.error}: ${open.error.error_chain_str}` : ""}
          </p>
          <Transcript messages={[...open.prompt, ...open.completion]} />
        </div>
      ) : null}
    </section>
  );
}

export function EvalJobPage({ evalId }: { evalId: string }) {
  const [job, setJob] = useState<EvalJob | null>(null);
  const [progress, setProgress] = useState<{ status: string; progress: EvalProgress } | null>(null);
  const [rollouts, setRollouts] = useState<EvalRollout[] | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let stop = (): void => {};
    const finish = (j: EvalJob): void => {
      setJob(j);
      setProgress({ status: j.status, progress: j.progress });
      loadRollouts(evalId).then(setRollouts, (e: unknown) => setError(errorText(e)));
    };
    api<EvalJob>("GET", evalUrl(evalId)).then(
      (j) => {
        setJob(j);
        setProgress({ status: j.status, progress: j.progress });
        if (j.status === "queued" || j.status === "running") stop = followEval(evalId, (e) => setProgress({ status: e.status, progress: e.progress }), finish, setError);
        else finish(j);
      },
      (e: unknown) => setError(errorText(e)),
    );
    return () => stop();
  }, [evalId]);

  if (!job) return <PageState title={`Evaluation ${evalId}`} error={error} busy={`Loading ${evalId}…`} />;
  return (
    <>
      <h1>
        Evaluation <span class="muted">{job.eval_id}</span>
      </h1>
      <p>
        <a href={href(`/envs/${encodeURIComponent(job.env_id)}`)}>{job.env_id}</a> v{job.env_version} · model <code>{job.model}</code> · {job.request.num_examples} examples × {job.request.rollouts_per_example} rollouts
        {job.request.temperature !== undefined ? ` · temperature ${job.request.temperature}` : ""}
      </p>
      {progress ? <ProgressBar progress={progress.progress} status={progress.status} /> : null}
      {job.error ? <p class="error">{job.error}</p> : null}
      {error ? <p class="error">{error}</p> : null}
      {job.summary ? <SummaryView summary={job.summary} /> : null}
      {rollouts ? <ExampleTable rollouts={rollouts} /> : null}
    </>
  );
}

/** Two runs side by side: the headline figures in one table, each run's charts in its column. */
export function EvalCompare({ a, b }: { a: string; b: string }) {
  const [jobs] = useLoad(() => Promise.all([api<EvalJob>("GET", evalUrl(a)), api<EvalJob>("GET", evalUrl(b))]), `${a}|${b}`);
  if (jobs.state !== "ok") return <PageState title="Compare" error={jobs.state === "error" ? jobs.error : null} />;
  const [x, y] = jobs.value;
  const rows: [string, (j: EvalJob) => string][] = [
    ["env", (j) => `${j.env_id} v${j.env_version}`],
    ["model", (j) => j.model],
    ["status", (j) => j.status],
    ["rollouts", (j) => String(j.summary?.rollouts ?? j.progress.done)],
    ["mean reward", (j) => j.summary?.reward.mean.toFixed(3) ?? "–"],
    ["std", (j) => j.summary?.reward.std.toFixed(3) ?? "–"],
    ...Object.keys({ ...x.summary?.pass_at_k, ...y.summary?.pass_at_k }).map((k): [string, (j: EvalJob) => string] => [`pass@${k}`, (j) => j.summary?.pass_at_k[k]?.toFixed(3) ?? "–"]),
    ["error rate", (j) => (j.summary ? pct(j.summary.error_rate) : "–")],
    ["output tokens (mean)", (j) => j.summary?.usage.mean_output_tokens.toFixed(0) ?? "–"],
  ];
  const components = [...new Set([...(x.summary?.components ?? []), ...(y.summary?.components ?? [])].map((c) => c.name))];
  for (const name of components) rows.push([`${name} (mean)`, (j) => j.summary?.components.find((c) => c.name === name)?.mean.toFixed(3) ?? "–"]);
  return (
    <>
      <h1>Compare</h1>
      <div class="scroll">
        <table data-testid="compare">
          <thead>
            <tr>
              <th></th>
              {[x, y].map((j) => (
                <th key={j.eval_id}>
                  <a href={href(`/evals/${encodeURIComponent(j.eval_id)}`)}>{j.eval_id}</a>
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map(([label, f]) => (
              <tr key={label}>
                <th scope="row">{label}</th>
                <td>{f(x)}</td>
                <td>{f(y)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div class="grid2">
        {[x, y].map((j) => (j.summary ? <Histogram key={j.eval_id} bins={j.summary.histogram} label={`${j.eval_id}: reward`} /> : <p key={j.eval_id}>no summary yet</p>))}
      </div>
    </>
  );
}
