import type { ChatMessage } from "../../../src/protocol/index.js";
import { contentText, readToolResult, transcriptEntries, type TranscriptEntry } from "../tool-calls.js";
import { ToolCallBlock, ToolResultBlock } from "./tool-call.js";

/** One message: role, text, and its tool calls, each with its result (components/tool-call.tsx). */
export function Message({ entry, note }: { entry: TranscriptEntry; note?: string }) {
  const m = entry.message as ChatMessage & { tool_call_id?: string };
  const text = contentText(m.content);
  return (
    <div class={`msg msg-${m.role}`} data-role={m.role}>
      <div class="msg-head">
        <span class="role">
          {m.role === "tool" ? `tool result${m.tool_call_id ? ` (${m.tool_call_id})` : ""}` : m.role}
          {/* A seated episode's whole log names the seat each message belongs to. */}
          {m.name ? <span class="seat-name"> · {m.name}</span> : null}
        </span>
        {note ? <span class="muted">{note}</span> : null}
      </div>
      {m.role === "tool" ? <ToolResultBlock result={readToolResult(text)} /> : text ? <pre class="msg-text">{text}</pre> : null}
      {entry.calls.map((item, i) => (
        <ToolCallBlock key={`${i}:${item.call.id}`} item={item} />
      ))}
    </div>
  );
}

/**
 * A whole transcript; `notes[i]` (e.g. "turn 2 · 35 ms") is shown beside message i. A tool
 * message is shown inside the call it answers, so its note (if any) joins that message's.
 */
export function Transcript({ messages, notes }: { messages: readonly ChatMessage[]; notes?: readonly (string | undefined)[] }) {
  return (
    <div class="transcript" aria-label="transcript">
      {transcriptEntries(messages).map((entry) => {
        const note = [entry.index, ...entry.calls.map((c) => c.resultIndex)]
          .map((i) => (i === null ? undefined : notes?.[i]))
          .filter(Boolean)
          .join(" · ");
        return <Message key={entry.index} entry={entry} note={note || undefined} />;
      })}
    </div>
  );
}
