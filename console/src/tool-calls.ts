// Tool calls as a person debugging an agent reads them: each call with its own result, a
// command's exit code read from the text the sandboxed environments write. Pure functions
// over transcript data (untrusted model output): they return text, never markup.
import type { ChatMessage, Episode } from "../../src/protocol/index.js";

/**
 * How a command ended, from the first line of its result as harbor's `bash` tool writes it
 * (src/envs/builtin/harbor/box-text.ts): `exit code: N`, the out-of-memory kill, or the
 * time limit. Any environment whose tool answers in that form gets the same reading.
 */
export type CommandEnd = { kind: "exit"; code: number | null } | { kind: "oom"; code: number | null } | { kind: "timeout"; seconds: number };

export interface ToolResultText {
  /** The command form's head line, read; null when the text is not in that form. */
  end: CommandEnd | null;
  /** What the tool printed: in the command form without its head line and cut note (and "" for `(no output)`); otherwise the whole text. */
  output: string;
  /** The command form's note that the output was cut: the bytes shown of those the command wrote. */
  cut: { shownBytes: number; totalBytes: number } | null;
  /** A tool's refusal or failure (`Error: …`, from the tool or the tool runner): its first line, without `Error: `. */
  error: string | null;
}

const EXIT_LINE = /^exit code: (-?\d+|none)$/;
const OOM_LINE = /^\[killed: the box ran out of memory\] exit code: (-?\d+|none)$/;
const TIMEOUT_LINE = /^\[timed out after (\d+(?:\.\d+)?) s; the command and its processes were killed\]$/;
const CUT_NOTE = /\n\[output cut: the first (\d+) of (\d+) bytes are shown\]$/;
const NO_OUTPUT = "(no output)";

const utf8Bytes = (s: string): number => new TextEncoder().encode(s).length;
const exitCode = (s: string): number | null => (s === "none" ? null : Number(s));

function commandEnd(head: string): CommandEnd | null {
  const exit = EXIT_LINE.exec(head);
  if (exit) return { kind: "exit", code: exitCode(exit[1]!) };
  const oom = OOM_LINE.exec(head);
  if (oom) return { kind: "oom", code: exitCode(oom[1]!) };
  const timeout = TIMEOUT_LINE.exec(head);
  if (timeout) return { kind: "timeout", seconds: Number(timeout[1]) };
  return null;
}

/** Reads one tool result's text: the command form when it has it, a tool error, or plain output. */
export function readToolResult(text: string): ToolResultText {
  const newline = text.indexOf("\n");
  const end = newline < 0 ? null : commandEnd(text.slice(0, newline));
  if (!end) return { end: null, output: text, cut: null, error: text.startsWith("Error: ") ? text.slice(7).split("\n", 1)[0]! : null };
  let body = text.slice(newline + 1);
  let cut: ToolResultText["cut"] = null;
  const note = CUT_NOTE.exec(body);
  // The note counts the bytes it follows: a command that prints a look-alike line is not taken for a cut.
  if (note && utf8Bytes(body.slice(0, note.index)) === Number(note[1])) {
    cut = { shownBytes: Number(note[1]), totalBytes: Number(note[2]) };
    body = body.slice(0, note.index);
  }
  return { end, output: body === NO_OUTPUT && !cut ? "" : body, cut, error: null };
}

/** One tool call's arguments laid out for reading. */
export interface ToolCallView {
  id: string;
  name: string;
  /** A string `command` argument (bash's, or any tool's that takes one): shown as the command. */
  command: string | null;
  /** A string `path` argument (the file tools'): shown beside the tool's name. */
  path: string | null;
  /** The other arguments in the model's order: strings as they are, anything else as JSON. */
  fields: { name: string; text: string }[];
  /** Arguments that are not a JSON object, as the model wrote them. */
  raw: string | null;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** A tool call of any shape (run directories hold other tools' data too) as a `ToolCallView`. */
export function describeToolCall(call: unknown): ToolCallView {
  const c = isRecord(call) ? call : {};
  const fn = isRecord(c.function) ? c.function : {};
  const view: ToolCallView = { id: typeof c.id === "string" ? c.id : "", name: typeof fn.name === "string" ? fn.name : "(no name)", command: null, path: null, fields: [], raw: null };
  let args: unknown = fn.arguments;
  if (typeof args === "string") {
    try {
      args = JSON.parse(args);
    } catch {
      view.raw = args as string;
      return view;
    }
  }
  if (!isRecord(args)) {
    view.raw = args === undefined ? "" : typeof fn.arguments === "string" ? fn.arguments : JSON.stringify(args);
    return view;
  }
  for (const [name, value] of Object.entries(args)) {
    if (name === "command" && typeof value === "string" && view.command === null) view.command = value;
    else if (name === "path" && typeof value === "string" && view.path === null) view.path = value;
    else view.fields.push({ name, text: typeof value === "string" ? value : JSON.stringify(value, null, 2) });
  }
  return view;
}

export interface CallWithResult {
  call: ToolCallView;
  /** The tool message answering the call, read; null when the transcript has none (yet). */
  result: ToolResultText | null;
  /** That message's position in the transcript. */
  resultIndex: number | null;
}

/** A message to show, with its tool calls each paired with its result. */
export interface TranscriptEntry {
  index: number;
  message: ChatMessage;
  calls: CallWithResult[];
}

/** A message's text: a string, or the text parts of a content array (other parts named). */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p: unknown) => (isRecord(p) ? (p.type === "text" ? (typeof p.text === "string" ? p.text : "") : `[${String(p.type)}]`) : "")).join("");
  return content == null ? "" : JSON.stringify(content);
}

/**
 * The transcript as entries to show: each assistant message carries its tool calls, each
 * with the tool message that answers it (same `tool_call_id`, before the next assistant
 * message); those tool messages are not listed again. A tool message that answers no call
 * shown stays an entry of its own.
 */
export function transcriptEntries(messages: readonly ChatMessage[]): TranscriptEntry[] {
  const used = new Set<number>();
  const entries: TranscriptEntry[] = [];
  messages.forEach((message, index) => {
    if (used.has(index)) return;
    const toolCalls = message.role === "assistant" && Array.isArray(message.tool_calls) ? (message.tool_calls as unknown[]) : [];
    const calls = toolCalls.map((raw): CallWithResult => {
      const call = describeToolCall(raw);
      for (let j = index + 1; j < messages.length; j++) {
        const m = messages[j]!;
        if (m.role === "assistant") break;
        if (m.role === "tool" && !used.has(j) && call.id !== "" && m.tool_call_id === call.id) {
          used.add(j);
          return { call, result: readToolResult(contentText(m.content)), resultIndex: j };
        }
      }
      return { call, result: null, resultIndex: null };
    });
    entries.push({ index, message, calls });
  });
  return entries;
}

export interface ToolCallCounts {
  calls: number;
  /** Per tool name, in the order first called. */
  byTool: [string, number][];
  /** Results in the command form, and of those: a non-zero exit, the time limit, out of memory, output cut. */
  commands: number;
  nonZero: number;
  timedOut: number;
  outOfMemory: number;
  cut: number;
  /** Results that are a tool error (`Error: …`). */
  errors: number;
  /** Calls with no result in the transcript. */
  unanswered: number;
}

export function countToolCalls(entries: readonly TranscriptEntry[]): ToolCallCounts {
  const counts: ToolCallCounts = { calls: 0, byTool: [], commands: 0, nonZero: 0, timedOut: 0, outOfMemory: 0, cut: 0, errors: 0, unanswered: 0 };
  const byTool = new Map<string, number>();
  for (const { calls } of entries) {
    for (const { call, result } of calls) {
      counts.calls++;
      byTool.set(call.name, (byTool.get(call.name) ?? 0) + 1);
      if (!result) counts.unanswered++;
      else if (result.error !== null) counts.errors++;
      if (!result?.end) continue;
      counts.commands++;
      if (result.end.kind === "timeout") counts.timedOut++;
      else if (result.end.kind === "oom") counts.outOfMemory++;
      else if (result.end.code !== 0) counts.nonZero++;
      if (result.cut) counts.cut++;
    }
  }
  counts.byTool = [...byTool];
  return counts;
}

/** The header above an episode's transcript: what its tools did, and its sandbox's facts that the episode view carries. */
export interface EpisodeToolFacts {
  /** "Sandbox" when the episode runs commands (a `bash` tool, or results in the command form); else "Tool calls". */
  title: string;
  facts: { label: string; value: string }[];
}

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/**
 * Facts for the episode page's header, or null for an episode with no tools and no tool
 * calls. The episode view names no container (its id and image stay in the server's
 * state), so the facts are the task asked for, the tools, what the calls did (counted from
 * the transcript shown) and the score's command time and test counts when it has them.
 */
export function episodeToolFacts(ep: Pick<Episode, "args" | "tools" | "score">, entries: readonly TranscriptEntry[]): EpisodeToolFacts | null {
  const counts = countToolCalls(entries);
  const tools = ep.tools.map((t) => t.function.name);
  if (!tools.length && !counts.calls) return null;
  const facts: EpisodeToolFacts["facts"] = [];
  if (typeof ep.args.task === "string") facts.push({ label: "task", value: ep.args.task });
  if (tools.length) facts.push({ label: "tools", value: tools.join(", ") });
  facts.push({ label: "tool calls", value: counts.calls ? `${counts.calls} (${counts.byTool.map(([name, n]) => `${name} ${n}`).join(", ")})` : "none" });
  if (counts.commands) {
    const ends = [
      counts.nonZero ? `${counts.nonZero} non-zero exit` : "",
      counts.timedOut ? `${counts.timedOut} timed out` : "",
      counts.outOfMemory ? `${counts.outOfMemory} out of memory` : "",
      counts.cut ? `${counts.cut} output cut` : "",
    ].filter(Boolean);
    facts.push({ label: "commands", value: `${counts.commands} run${ends.length ? ` · ${ends.join(" · ")}` : ""}` });
  }
  if (counts.errors) facts.push({ label: "tool errors", value: String(counts.errors) });
  if (counts.unanswered) facts.push({ label: "unanswered", value: plural(counts.unanswered, "call") });
  const metrics = ep.score?.metrics ?? {};
  if (typeof metrics.command_seconds === "number") facts.push({ label: "command time", value: `${metrics.command_seconds} s` });
  if (typeof metrics.tests_passed === "number" || typeof metrics.tests_failed === "number") {
    facts.push({ label: "tests", value: `${metrics.tests_passed ?? 0} passed · ${metrics.tests_failed ?? 0} failed` });
  }
  const sandboxed = tools.includes("bash") || counts.commands > 0;
  return { title: sandboxed ? "Sandbox" : "Tool calls", facts };
}

/** Outputs past either bound start collapsed: the command and its badge stay in view, the log one click away. */
export const OPEN_OUTPUT_LINES = 20;
export const OPEN_OUTPUT_CHARS = 2000;

const lineCount = (text: string): number => {
  const trimmed = text.endsWith("\n") ? text.slice(0, -1) : text;
  return trimmed === "" ? 0 : trimmed.split("\n").length;
};

export function startsCollapsed(text: string): boolean {
  return text.length > OPEN_OUTPUT_CHARS || lineCount(text) > OPEN_OUTPUT_LINES;
}

/** "12 lines · 3.4 KB": the size of an output, for its summary line. */
export function sizeText(text: string): string {
  const lines = lineCount(text);
  const bytes = utf8Bytes(text);
  const size = bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} KB`;
  return `${plural(lines, "line")} · ${size}`;
}

/** The badge's words and tone for a call's result. */
export function resultBadge(result: ToolResultText | null): { text: string; tone: "ok" | "bad" | "warn" | "plain" } {
  if (!result) return { text: "no result", tone: "warn" };
  if (result.end?.kind === "timeout") return { text: `timed out after ${result.end.seconds} s`, tone: "bad" };
  if (result.end?.kind === "oom") return { text: `out of memory · exit ${result.end.code ?? "none"}`, tone: "bad" };
  if (result.end) return { text: `exit ${result.end.code ?? "none"}`, tone: result.end.code === 0 ? "ok" : "bad" };
  if (result.error !== null) return { text: "error", tone: "bad" };
  return { text: "done", tone: "plain" };
}
