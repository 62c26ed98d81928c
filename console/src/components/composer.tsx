import { useState } from "preact/hooks";
import type { AssistantMessage, ToolDefinition } from "../../../src/protocol/index.js";
import type { JsonSchema } from "./args-form.js";

interface DraftCall {
  name: string;
  args: string;
}

/** A JSON skeleton of a tool's arguments from its parameter schema: each property with a placeholder of its type. */
export function argumentsSkeleton(schema: JsonSchema | undefined): string {
  const out: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(schema?.properties ?? {})) {
    const t = Array.isArray(s.type) ? s.type[0] : s.type;
    out[name] = s.default ?? (s.enum ? s.enum[0] : t === "number" || t === "integer" ? 0 : t === "boolean" ? false : t === "array" ? [] : t === "object" ? {} : "");
  }
  return JSON.stringify(out, null, 2);
}

/**
 * What the model would send: text, and tool calls whose arguments start from the tool's
 * JSON Schema (shown beside them). Arguments must parse as JSON before anything is sent.
 * Ctrl+Enter (⌘+Enter) sends.
 */
export function Composer({ tools, disabled, onSend }: { tools: readonly ToolDefinition[]; disabled: boolean; onSend: (m: AssistantMessage) => Promise<boolean> }) {
  const [content, setContent] = useState("");
  const [calls, setCalls] = useState<DraftCall[]>([]);
  const [pick, setPick] = useState(tools[0]?.function.name ?? "");
  const [error, setError] = useState<string | null>(null);
  const [sending, setSending] = useState(false);

  const send = async (): Promise<void> => {
    if (disabled || sending) return;
    const toolCalls = [];
    for (const [i, call] of calls.entries()) {
      try {
        JSON.parse(call.args);
      } catch {
        setError(`tool call ${i + 1} (${call.name}): arguments are not valid JSON`);
        return;
      }
      toolCalls.push({ id: `call_${Date.now().toString(36)}_${i}`, type: "function" as const, function: { name: call.name, arguments: call.args } });
    }
    setError(null);
    setSending(true);
    const message = { role: "assistant", content, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) } as AssistantMessage;
    const ok = await onSend(message);
    setSending(false);
    if (ok) {
      setContent("");
      setCalls([]);
    }
  };

  return (
    <form
      class="composer"
      aria-label="assistant message"
      onSubmit={(e) => {
        e.preventDefault();
        void send();
      }}
    >
      <label for="assistant-content">Assistant message</label>
      <textarea
        id="assistant-content"
        rows={4}
        value={content}
        // Read-only, not disabled, while a step is in flight: a disabled field would drop the keyboard focus.
        readOnly={disabled}
        placeholder="What the model says, e.g. <answer>…</answer>"
        onInput={(e) => setContent(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
            e.preventDefault();
            void send();
          }
        }}
      />
      {calls.map((call, i) => {
        const tool = tools.find((t) => t.function.name === call.name);
        return (
          <fieldset key={i} class="draft-call">
            <legend>
              tool call {i + 1}: <code>{call.name}</code>
            </legend>
            <label for={`call-args-${i}`}>arguments (JSON)</label>
            <textarea id={`call-args-${i}`} rows={4} value={call.args} onInput={(e) => setCalls(calls.map((c, j) => (j === i ? { ...c, args: e.currentTarget.value } : c)))} />
            <details>
              <summary>schema</summary>
              <pre class="block">{JSON.stringify(tool?.function.parameters ?? {}, null, 2)}</pre>
            </details>
            <button type="button" onClick={() => setCalls(calls.filter((_, j) => j !== i))}>
              Remove
            </button>
          </fieldset>
        );
      })}
      <div class="row">
        {tools.length ? (
          <>
            <label for="tool-pick" class="sr-only">
              tool
            </label>
            <select id="tool-pick" value={pick} onChange={(e) => setPick(e.currentTarget.value)} disabled={disabled}>
              {tools.map((t) => (
                <option key={t.function.name} value={t.function.name}>
                  {t.function.name}
                </option>
              ))}
            </select>
            <button
              type="button"
              disabled={disabled}
              onClick={() => setCalls([...calls, { name: pick, args: argumentsSkeleton(tools.find((t) => t.function.name === pick)?.function.parameters as JsonSchema | undefined) }])}
            >
              Add tool call
            </button>
          </>
        ) : null}
        <button type="submit" aria-disabled={disabled || sending}>
          Send
        </button>
        <small class="muted">Ctrl+Enter sends</small>
      </div>
      {error ? <p class="error">{error}</p> : null}
    </form>
  );
}
