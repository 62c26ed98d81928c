import { useRef, useState } from "preact/hooks";
import type { EnvInfo, EnvList as EnvListBody, ExamplePage, Split } from "../../../src/protocol/index.js";
import { api } from "../api.js";
import { ArgsForm, type JsonSchema } from "../components/args-form.js";
import { Transcript } from "../components/transcript.js";
import { href, navigate } from "../router.js";
import { useLoad } from "../use-load.js";
import { PageState } from "../components/page-state.js";
import { CLIENT, playerLabel } from "../seats.js";

export function EnvList() {
  const [envs] = useLoad(() => api<EnvListBody>("GET", "/v1/envs"), "envs");
  if (envs.state !== "ok") return <PageState title="Environments" error={envs.state === "error" ? envs.error : null} busy="Loading environments…" />;
  return (
    <>
      <h1>Environments</h1>
      <ul class="cards">
        {envs.value.envs.map((e) => (
          <li key={e.id} class="card">
            <a href={href(`/envs/${encodeURIComponent(e.id)}`)}>
              <strong>{e.id}</strong>
            </a>{" "}
            <span class="tag">{e.kind}</span> <span class="muted">v{e.version}</span>
            <p>{e.description}</p>
            <a class="button" href={href(`/play/${encodeURIComponent(e.id)}`)}>
              Play
            </a>
          </li>
        ))}
      </ul>
    </>
  );
}

function Examples({ env, split }: { env: EnvInfo; split: Split }) {
  const [offset, setOffset] = useState(0);
  const limit = 5;
  const [page] = useLoad(() => api<ExamplePage>("GET", `/v1/envs/${encodeURIComponent(env.id)}/examples?split=${split}&offset=${offset}&limit=${limit}`), `${split}|${offset}`);
  // The page before stays on screen while the next one loads, so the pager (and the keyboard focus on it) stays put.
  const shown = useRef<ExamplePage | null>(null);
  if (page.state === "ok") shown.current = page.value;
  if (page.state === "error") return <p class="error">{page.error}</p>;
  if (!shown.current) return <p aria-busy="true">Loading examples…</p>;
  const { examples, total } = shown.current;
  // aria-disabled rather than disabled on the pager: paging to the end must not drop the keyboard focus.
  const atEnd = examples.length < limit || (total !== null && offset + limit >= total);
  return (
    <div aria-busy={page.state === "loading"}>
      {examples.map((ex) => (
        <details key={ex.index} class="example">
          <summary>
            #{ex.index}
            {ex.answer != null ? <span class="muted"> · answer {ex.answer.length > 60 ? `${ex.answer.slice(0, 60)}…` : ex.answer}</span> : null}{" "}
            <a href={href(`/play/${encodeURIComponent(env.id)}?split=${split}&index=${ex.index}`)}>play this task</a>
          </summary>
          <Transcript messages={ex.prompt} />
        </details>
      ))}
      <div class="row">
        <button aria-disabled={offset === 0} onClick={() => offset > 0 && setOffset(Math.max(0, offset - limit))}>
          Previous
        </button>
        <span class="muted">
          {offset + 1}–{offset + examples.length} of {total ?? "∞ (procedural: index = seed)"}
        </span>
        <button aria-disabled={atEnd} onClick={() => !atEnd && setOffset(offset + limit)}>
          Next
        </button>
      </div>
    </div>
  );
}

/**
 * Who plays each seat of a multi-player environment: you (the client) or one of its
 * policies, the environment's default first. At least one seat must be yours.
 */
function SeatPicker({ env, seats, onChange }: { env: EnvInfo; seats: Record<string, string>; onChange: (seats: Record<string, string>) => void }) {
  return (
    <fieldset>
      <legend>seats</legend>
      {(env.seats ?? []).map((seat) => (
        <div class="field" key={seat.name}>
          <label for={`seat-${seat.name}`}>
            {seat.name} <span class="muted">({seat.description})</span>
          </label>
          <select id={`seat-${seat.name}`} value={seats[seat.name] ?? seat.default} onChange={(e) => onChange({ ...seats, [seat.name]: e.currentTarget.value })}>
            {seat.players.map((p) => (
              <option key={p} value={p}>
                {p === CLIENT ? "you (client)" : `${playerLabel(p)}${env.policies?.[p] ? ` — ${env.policies[p]}` : ""}`}
              </option>
            ))}
          </select>
        </div>
      ))}
    </fieldset>
  );
}

/** Start form: split, task index or seed, who plays each seat, and the args form generated from the environment's schema. */
export function StartForm({ env }: { env: EnvInfo }) {
  const [args, setArgs] = useState<Record<string, unknown>>({});
  const [argsError, setArgsError] = useState<string | null>(null);
  const [split, setSplit] = useState<Split>("train");
  const [index, setIndex] = useState("");
  const defaults = Object.fromEntries((env.seats ?? []).map((s) => [s.name, s.default]));
  const [seats, setSeats] = useState<Record<string, string>>(defaults);
  const seatsError = env.seats?.length && !Object.values(seats).includes(CLIENT) ? "Take at least one seat yourself (you (client)): the environment cannot play every seat." : null;
  return (
    <form
      class="start"
      aria-label="start an episode"
      onSubmit={(e) => {
        e.preventDefault();
        if (seatsError) return;
        const q = new URLSearchParams({ split });
        if (index !== "") q.set("index", index);
        if (Object.keys(args).length) q.set("args", JSON.stringify(args));
        // Only the seats changed from the environment's defaults: the rest the server fills in.
        const changed = Object.fromEntries(Object.entries(seats).filter(([seat, player]) => defaults[seat] !== player));
        if (Object.keys(changed).length) q.set("seats", JSON.stringify(changed));
        navigate(`/play/${encodeURIComponent(env.id)}?${q}`);
      }}
    >
      <div class="field">
        <label for="start-split">split</label>
        <select id="start-split" value={split} onChange={(e) => setSplit(e.currentTarget.value as Split)}>
          <option value="train">train ({env.splits.train ?? "∞"})</option>
          <option value="eval">eval ({env.splits.eval ?? "∞"})</option>
        </select>
      </div>
      <div class="field">
        <label for="start-index">task index</label>
        <input id="start-index" type="number" min={0} placeholder="random" value={index} onInput={(e) => setIndex(e.currentTarget.value)} />
      </div>
      {env.seats?.length ? <SeatPicker env={env} seats={seats} onChange={setSeats} /> : null}
      {seatsError ? (
        <p class="error" role="alert">
          {seatsError}
        </p>
      ) : null}
      <fieldset>
        <legend>args</legend>
        <ArgsForm
          schema={env.args_schema as JsonSchema}
          idPrefix="arg"
          onChange={(a, err) => {
            setArgs(a);
            setArgsError(err);
          }}
        />
      </fieldset>
      {argsError ? <p class="error">{argsError}</p> : null}
      <button type="submit" disabled={argsError !== null || seatsError !== null}>
        Start episode
      </button>
    </form>
  );
}

export function EnvDetail({ envId }: { envId: string }) {
  const [env] = useLoad(() => api<EnvInfo>("GET", `/v1/envs/${encodeURIComponent(envId)}`), envId);
  const [split, setSplit] = useState<Split>("train");
  if (env.state !== "ok") return <PageState title={envId} error={env.state === "error" ? env.error : null} busy={`Loading ${envId}…`} />;
  const e = env.value;
  return (
    <>
      <h1>
        {e.id} <span class="muted">v{e.version}</span>
      </h1>
      <p>{e.description}</p>
      <p class="muted">
        {e.kind} · at most {e.max_turns} turn{e.max_turns === 1 ? "" : "s"}
        {e.answer_format ? ` · answer as ${e.answer_format}` : ""}
      </p>
      <div class="grid2">
        <section>
          <h2>System prompt</h2>
          {e.system_prompt ? <pre class="block">{e.system_prompt}</pre> : <p class="muted">none</p>}
          <h2>Rubric</h2>
          <table>
            <thead>
              <tr>
                <th>component</th>
                <th>weight</th>
                <th>what it measures</th>
              </tr>
            </thead>
            <tbody>
              {e.rubric.map((r) => (
                <tr key={r.name}>
                  <td>{r.name}</td>
                  <td>{r.weight}</td>
                  <td>
                    {r.description ?? ""}
                    {r.group ? <span class="tag">group</span> : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <h2>Tools</h2>
          {e.tools.length === 0 ? <p class="muted">none</p> : null}
          {e.tools.map((t) => (
            <details key={t.function.name}>
              <summary>
                <code>{t.function.name}</code> <span class="muted">{t.function.description}</span>
              </summary>
              <pre class="block">{JSON.stringify(t.function.parameters, null, 2)}</pre>
            </details>
          ))}
        </section>
        <section>
          <h2>Play</h2>
          <StartForm env={e} />
        </section>
      </div>
      <h2>Examples</h2>
      <div class="row" role="group" aria-label="split">
        {(["train", "eval"] as const).map((s) => (
          <button key={s} aria-pressed={split === s} onClick={() => setSplit(s)}>
            {s}
          </button>
        ))}
      </div>
      <Examples key={split} env={e} split={split} />
    </>
  );
}
