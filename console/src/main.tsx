import { render } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { apiKey, onUnauthorized, setApiKey } from "./api.js";
import { href, onLinkClick, useLocation } from "./router.js";
import { EnvDetail, EnvList } from "./pages/envs.js";
import { Play } from "./pages/play.js";
import { EpisodeOpen, EpisodePage } from "./pages/episode.js";
import { EvalCompare, EvalJobPage, EvalList } from "./pages/evals.js";
import "./style.css";

/** Asked for when the server answers 401; kept in sessionStorage only (gone with the tab). */
function KeyForm({ onDone, onDismiss }: { onDone: () => void; onDismiss: () => void }) {
  const [key, setKey] = useState("");
  const input = useRef<HTMLInputElement>(null);
  // The form appears in answer to a 401: the keyboard goes to it rather than staying where it was.
  useEffect(() => input.current?.focus(), []);
  return (
    <form
      class="keyform"
      aria-label="API key"
      onSubmit={(e) => {
        e.preventDefault();
        setApiKey(key.trim() || null);
        onDone();
      }}
      onKeyDown={(e) => {
        if (e.key === "Escape") onDismiss();
      }}
    >
      <label for="api-key">This server needs an API key</label>
      <input ref={input} id="api-key" type="password" autocomplete="off" value={key} onInput={(e) => setKey(e.currentTarget.value)} />
      <button type="submit">Use key</button>
      <small class="muted">Kept in this tab's session storage only; sent as a Bearer header.</small>
    </form>
  );
}

function Page({ path, query }: { path: string; query: URLSearchParams }) {
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  const [a, b] = parts;
  if (!a || a === "envs") return b ? <EnvDetail envId={b} /> : <EnvList />;
  if (a === "play" && b) return <Play envId={b} query={query} />;
  if (a === "episodes") return b ? <EpisodePage episodeId={b} seat={query.get("seat")} /> : <EpisodeOpen />;
  if (a === "evals") {
    if (b === "compare") return <EvalCompare a={query.get("a") ?? ""} b={query.get("b") ?? ""} />;
    return b ? <EvalJobPage evalId={b} /> : <EvalList />;
  }
  return <p>No such page. <a href={href("/")}>Environments</a></p>;
}

function App() {
  const { path, query } = useLocation();
  const [askKey, setAskKey] = useState(false);
  const [epoch, setEpoch] = useState(0);
  useEffect(() => onUnauthorized(() => setAskKey(true)), []);
  const main = useRef<HTMLElement>(null);
  const first = useRef(true);
  // After a navigation inside the console the old page's focused link is gone: the keyboard
  // starts again at the top of the new page's content (as a full page load would put it).
  useEffect(() => {
    if (first.current) first.current = false;
    else main.current?.focus({ preventScroll: true });
  }, [path, query.toString()]);
  const section = path.split("/")[1] || "envs";
  const nav = [
    ["envs", "/", "Environments"],
    ["episodes", "/episodes", "Episodes"],
    ["evals", "/evals", "Evaluations"],
  ] as const;
  return (
    <div onClick={onLinkClick}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header>
        <strong class="brand">edgegym</strong>
        <nav aria-label="main">
          {nav.map(([key, to, label]) => (
            <a key={key} href={href(to)} aria-current={section === key || (key === "envs" && section === "play") ? "page" : undefined}>
              {label}
            </a>
          ))}
          <a href="/docs">API reference</a>
        </nav>
        {apiKey() ? (
          <button
            class="link"
            onClick={() => {
              setApiKey(null);
              setEpoch((e) => e + 1);
            }}
          >
            Forget key
          </button>
        ) : null}
      </header>
      {askKey ? (
        <KeyForm
          onDone={() => {
            setAskKey(false);
            setEpoch((e) => e + 1);
            main.current?.focus();
          }}
          onDismiss={() => {
            setAskKey(false);
            main.current?.focus();
          }}
        />
      ) : null}
      <main id="main" ref={main} tabIndex={-1} key={`${path}|${epoch}`}>
        <Page path={path} query={query} />
      </main>
    </div>
  );
}

render(<App />, document.getElementById("app")!);
