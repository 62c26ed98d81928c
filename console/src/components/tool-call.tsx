import { resultBadge, sizeText, startsCollapsed, type CallWithResult, type ToolResultText } from "../tool-calls.js";

/** Text that may be long: open when short, collapsed when long, its size in the summary. */
function Collapsible({ label, text }: { label: string; text: string }) {
  return (
    <details class="out" open={!startsCollapsed(text)}>
      <summary>
        {label} <span class="muted">({sizeText(text)})</span>
      </summary>
      <pre class="block">{text}</pre>
    </details>
  );
}

function Badges({ result }: { result: ToolResultText | null }) {
  const badge = resultBadge(result);
  return (
    <>
      <span class={`badge badge-${badge.tone}`} data-testid="call-status">
        {badge.text}
      </span>
      {result?.cut ? (
        <span class="badge badge-warn" data-testid="call-cut">
          output cut: {result.cut.shownBytes} of {result.cut.totalBytes} bytes
        </span>
      ) : null}
    </>
  );
}

function Output({ result }: { result: ToolResultText }) {
  if (result.output === "") return <p class="muted out-empty">no output</p>;
  return <Collapsible label={result.error !== null ? "error" : "output"} text={result.output} />;
}

/** An argument short enough to read in the call's head line; longer ones get a block of their own. */
const inline = (text: string): boolean => text.length <= 80 && !text.includes("\n");

/**
 * One tool call with its result: the tool's name and `path` argument, a badge for how it
 * ended (the exit code when the result is in the command form), the `command` argument in a
 * monospace block, the other arguments, and the output (collapsed when long). All of it is
 * model or tool output, rendered as text nodes only.
 */
export function ToolCallBlock({ item }: { item: CallWithResult }) {
  const { call, result } = item;
  const short = call.fields.filter((f) => inline(f.text));
  const long = call.fields.filter((f) => !inline(f.text));
  return (
    <div class="call" data-tool={call.name}>
      <div class="call-head">
        <span class="call-name">{call.name}</span>
        {call.path !== null ? <code class="call-path">{call.path}</code> : null}
        {short.map((f) => (
          <span class="call-arg" key={f.name}>
            <span class="muted">{f.name}</span> <code>{f.text}</code>
          </span>
        ))}
        <Badges result={result} />
        {call.id ? <span class="muted call-id">{call.id}</span> : null}
      </div>
      {call.command !== null ? (
        <pre class="cmd">
          <code>{call.command}</code>
        </pre>
      ) : null}
      {long.map((f) => (
        <Collapsible key={f.name} label={f.name} text={f.text} />
      ))}
      {call.raw !== null ? <Collapsible label="arguments (not a JSON object)" text={call.raw} /> : null}
      {result ? <Output result={result} /> : null}
    </div>
  );
}

/** A tool message that answers no call in view: its badge and output alone. */
export function ToolResultBlock({ result }: { result: ToolResultText }) {
  return (
    <div class="call">
      <div class="call-head">
        <Badges result={result} />
      </div>
      <Output result={result} />
    </div>
  );
}
