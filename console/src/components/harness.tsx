import type { Episode } from "../../../src/protocol/index.js";

/** A harness episode's agent: how it runs or ended, and what it printed last. */
export function AgentRunView({ episode }: { episode: Episode }) {
  const agent = episode.agent;
  if (!agent) return null;
  return (
    <section class="facts" aria-labelledby="agent-run" data-testid="agent-run">
      <h2 id="agent-run">Agent</h2>
      <dl>
        <div>
          <dt>status</dt>
          <dd data-testid="agent-status">{agent.status}</dd>
        </div>
        <div>
          <dt>exit code</dt>
          <dd>{agent.exit_code ?? "—"}</dd>
        </div>
        <div>
          <dt>model</dt>
          <dd>
            {agent.model} <span class="muted">via {agent.upstream}</span>
          </dd>
        </div>
        <div>
          <dt>calls</dt>
          <dd class="num">{agent.calls}</dd>
        </div>
        <div>
          <dt>tokens</dt>
          <dd class="num">{agent.tokens}</dd>
        </div>
        <div>
          <dt>time</dt>
          <dd class="num">{agent.seconds === null ? "running" : `${agent.seconds.toFixed(1)} s`}</dd>
        </div>
      </dl>
      {agent.output_tail ? (
        <details>
          <summary>output (last {agent.output_tail.length} characters)</summary>
          <pre class="block">{agent.output_tail}</pre>
        </details>
      ) : null}
    </section>
  );
}

/** Each model call of a harness episode: wire, status, latency, usage, and the request and answer as they went. */
export function ModelCalls({ episode }: { episode: Episode }) {
  const calls = episode.turns.filter((t) => t.call);
  if (!calls.length) return null;
  return (
    <>
      <h2>Model calls</h2>
      {calls.map((t) => {
        const call = t.call!;
        return (
          <details key={t.turn} data-testid="model-call">
            <summary>
              turn {t.turn}: {call.wire}
              {call.stream ? " (streamed)" : ""} · {call.status} · {call.latency_ms.toFixed(1)} ms
              {call.usage ? ` · ${call.usage.prompt_tokens} + ${call.usage.completion_tokens} tokens` : ""}
              {call.error ? <span class="error"> · {call.error}</span> : null}
            </summary>
            <pre class="block">request {JSON.stringify(call.request, null, 2)}</pre>
            <pre class="block">answer {JSON.stringify(call.response, null, 2)}</pre>
          </details>
        );
      })}
    </>
  );
}
