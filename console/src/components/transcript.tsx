import type { ChatMessage } from "../../../src/protocol/index.js";

type Part = { type: string; text?: string };

/** Message content as text: a string, or the text parts of a content array (images named, not shown). */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return (content as Part[]).map((p) => (p.type === "text" ? (p.text ?? "") : `[${p.type}]`)).join("");
  return content == null ? "" : JSON.stringify(content);
}

function prettyArgs(args: string): string {
  try {
    return JSON.stringify(JSON.parse(args), null, 2);
  } catch {
    return args;
  }
}

/** One message: role, text, and any tool calls with their arguments laid out. */
export function Message({ message, note }: { message: ChatMessage; note?: string }) {
  const m = message as ChatMessage & { tool_calls?: { id: string; function: { name: string; arguments: string } }[]; tool_call_id?: string; name?: string };
  const text = contentText(m.content);
  return (
    <div class={`msg msg-${m.role}`} data-role={m.role}>
      <div class="msg-head">
        <span class="role">{m.role === "tool" ? `tool result${m.tool_call_id ? ` (${m.tool_call_id})` : ""}` : m.role}</span>
        {note ? <span class="muted">{note}</span> : null}
      </div>
      {text ? <pre class="msg-text">{text}</pre> : null}
      {m.tool_calls?.map((call) => (
        <div class="tool-call" key={call.id}>
          <span class="tag">call {call.function.name}</span> <span class="muted">{call.id}</span>
          <pre>{prettyArgs(call.function.arguments)}</pre>
        </div>
      ))}
    </div>
  );
}

/** A whole transcript; `notes[i]` (e.g. "turn 2 · 35 ms") is shown beside message i. */
export function Transcript({ messages, notes }: { messages: readonly ChatMessage[]; notes?: readonly (string | undefined)[] }) {
  return (
    <div class="transcript" aria-label="transcript">
      {messages.map((m, i) => (
        <Message key={i} message={m} note={notes?.[i]} />
      ))}
    </div>
  );
}
