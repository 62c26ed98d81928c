import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../src/protocol/index.js";
import { describeExec } from "../src/envs/builtin/harbor/box-text.js";
import type { ExecResult } from "../src/envs/sandbox/types.js";
import { describeToolCall, episodeToolFacts, readToolResult, resultBadge, sizeText, startsCollapsed, transcriptEntries } from "../console/src/tool-calls.js";

/*
 * The console's reading of tool calls (console/src/tool-calls.ts), the part of the episode
 * page that is pure: results written by harbor's own describeExec (so a change of that text
 * fails here), calls paired with their results, and the header's counts. The browser test
 * (test/console-harbor.test.ts) shows the same on a real episode.
 */

const exec = (over: Partial<ExecResult>): ExecResult => ({ exitCode: 0, output: "", outputBytes: 0, truncated: false, timedOut: false, oomKilled: false, durationMs: 5, ...over });
const call = (id: string, name: string, args: unknown) => ({ id, type: "function" as const, function: { name, arguments: typeof args === "string" ? args : JSON.stringify(args) } });

describe("readToolResult", () => {
  it("reads the exit code and output of harbor's bash results", () => {
    expect(readToolResult(describeExec(exec({ exitCode: 3, output: "/app\nto-stderr\n", outputBytes: 15 }), 120))).toEqual({ end: { kind: "exit", code: 3 }, output: "/app\nto-stderr\n", cut: null, error: null });
    expect(readToolResult(describeExec(exec({ exitCode: 0 }), 120))).toEqual({ end: { kind: "exit", code: 0 }, output: "", cut: null, error: null });
    expect(readToolResult(describeExec(exec({ exitCode: null }), 120)).end).toEqual({ kind: "exit", code: null });
  });

  it("reads a timed-out command, an out-of-memory kill and a cut output (multi-byte text counted in bytes)", () => {
    const timedOut = readToolResult(describeExec(exec({ exitCode: null, timedOut: true, output: "started\n" }), 5));
    expect(timedOut).toEqual({ end: { kind: "timeout", seconds: 5 }, output: "started\n", cut: null, error: null });
    expect(resultBadge(timedOut)).toEqual({ text: "timed out after 5 s", tone: "bad" });

    const oom = readToolResult(describeExec(exec({ exitCode: 137, oomKilled: true, output: "Killed" }), 120));
    expect(oom.end).toEqual({ kind: "oom", code: 137 });
    expect(resultBadge(oom).text).toBe("out of memory · exit 137");

    const output = "é".repeat(100);
    const cut = readToolResult(describeExec(exec({ exitCode: 0, output, outputBytes: 1_000_000, truncated: true }), 120));
    expect(cut).toEqual({ end: { kind: "exit", code: 0 }, output, cut: { shownBytes: 200, totalBytes: 1_000_000 }, error: null });
  });

  it("does not take a printed look-alike of the cut note for a cut", () => {
    const printed = "hello\n[output cut: the first 3 of 9 bytes are shown]";
    const r = readToolResult(describeExec(exec({ exitCode: 0, output: printed, outputBytes: printed.length }), 120));
    expect(r.cut).toBeNull();
    expect(r.output).toBe(printed);
  });

  it("keeps any other tool's text whole, and reads the tool runner's errors", () => {
    expect(readToolResult("wrote 12 bytes to /app/a.txt")).toEqual({ end: null, output: "wrote 12 bytes to /app/a.txt", cut: null, error: null });
    const refused = readToolResult('Error: invalid arguments: command: Invalid input: expected string, received number\nmore');
    expect(refused.error).toBe("invalid arguments: command: Invalid input: expected string, received number");
    expect(resultBadge(refused)).toEqual({ text: "error", tone: "bad" });
    // A first line like the head but not the head (no newline after it, or words around it) is plain text.
    expect(readToolResult("exit code: 0").end).toBeNull();
    expect(readToolResult("the exit code: 0\nx").end).toBeNull();
    expect(resultBadge(null)).toEqual({ text: "no result", tone: "warn" });
  });
});

describe("describeToolCall", () => {
  it("takes bash's command and the file tools' path out of the arguments", () => {
    expect(describeToolCall(call("c1", "bash", { command: "ls -la /app", timeout_sec: 5 }))).toEqual({ id: "c1", name: "bash", command: "ls -la /app", path: null, fields: [{ name: "timeout_sec", text: "5" }], raw: null });
    expect(describeToolCall(call("c2", "edit_file", { path: "src/a.py", old_str: "a", new_str: "b" }))).toEqual({
      id: "c2",
      name: "edit_file",
      command: null,
      path: "src/a.py",
      fields: [
        { name: "old_str", text: "a" },
        { name: "new_str", text: "b" },
      ],
      raw: null,
    });
  });

  it("shows any tool's arguments, and arguments that are not a JSON object as written", () => {
    expect(describeToolCall(call("c3", "calculator", { expression: "2+2", precision: { digits: 3 } })).fields).toEqual([
      { name: "expression", text: "2+2" },
      { name: "precision", text: '{\n  "digits": 3\n}' },
    ]);
    expect(describeToolCall(call("c4", "bash", '{"command": "ls'))).toMatchObject({ command: null, raw: '{"command": "ls' });
    expect(describeToolCall(call("c5", "bash", "[1,2]")).raw).toBe("[1,2]");
    // A non-string command is an argument like any other (the tool refuses it), not the command.
    expect(describeToolCall(call("c6", "bash", { command: 42 }))).toMatchObject({ command: null, fields: [{ name: "command", text: "42" }] });
    // Foreign data (a run directory) may hold any shape.
    expect(describeToolCall({ function: { name: "x", arguments: { a: 1 } } })).toMatchObject({ id: "", name: "x", fields: [{ name: "a", text: "1" }] });
    expect(describeToolCall(null)).toMatchObject({ name: "(no name)", raw: "" });
  });
});

describe("transcriptEntries and the header", () => {
  const messages: ChatMessage[] = [
    { role: "system", content: "You are working in your own Linux container." },
    { role: "user", content: "Count the ERROR lines." },
    { role: "assistant", content: "Looking.", tool_calls: [call("a", "bash", { command: "grep -c ERROR app.log" }), call("b", "read_file", { path: "app.log" }), call("c", "bash", { command: "sleep 9", timeout_sec: 1 })] },
    { role: "tool", tool_call_id: "b", content: "line 1\nline 2\n" },
    { role: "tool", tool_call_id: "a", content: "exit code: 1\n(no output)" },
    { role: "tool", tool_call_id: "c", content: "[timed out after 1 s; the command and its processes were killed]\n(no output)" },
    { role: "assistant", content: null, tool_calls: [call("d", "bash", { command: "seq 100000" }), call("e", "write_file", { path: "/app/x", content: "y" })] },
    { role: "tool", tool_call_id: "d", content: `exit code: 0\n${"1\n".repeat(8)}\n[output cut: the first 16 of 588895 bytes are shown]` },
    { role: "tool", tool_call_id: "zzz", content: "exit code: 2\nstray" },
    { role: "assistant", content: "Done: 7." },
  ];

  it("pairs each call with the tool message that answers it, whatever their order, and keeps a stray result", () => {
    const entries = transcriptEntries(messages);
    expect(entries.map((e) => e.index)).toEqual([0, 1, 2, 6, 8, 9]);
    const [, , first, second, stray] = entries;
    expect(first!.calls.map((c) => [c.call.id, c.resultIndex, c.result?.end ?? null])).toEqual([
      ["a", 4, { kind: "exit", code: 1 }],
      ["b", 3, null],
      ["c", 5, { kind: "timeout", seconds: 1 }],
    ]);
    expect(second!.calls.map((c) => [c.call.id, c.resultIndex, c.result?.cut ?? null])).toEqual([
      ["d", 7, { shownBytes: 16, totalBytes: 588895 }],
      ["e", null, null],
    ]);
    expect(stray!.message.role).toBe("tool");
  });

  it("a result is not paired across the next assistant message", () => {
    const entries = transcriptEntries([{ role: "assistant", content: "", tool_calls: [call("a", "bash", { command: "true" })] }, { role: "assistant", content: "again" }, { role: "tool", tool_call_id: "a", content: "exit code: 0\n(no output)" }]);
    expect(entries).toHaveLength(3);
    expect(entries[0]!.calls[0]!.result).toBeNull();
  });

  it("counts what the calls did for the header, with the score's command time and tests", () => {
    const tools = ["bash", "read_file", "write_file", "edit_file"].map((name) => ({ type: "function" as const, function: { name, parameters: {} } }));
    const score = { reward: 1, components: [], metrics: { commands: 3, command_seconds: 1.4, tests_passed: 6, tests_failed: 0 } };
    const facts = episodeToolFacts({ args: { task: "count-errors" }, tools, score }, transcriptEntries(messages));
    expect(facts).toEqual({
      title: "Sandbox",
      facts: [
        { label: "task", value: "count-errors" },
        { label: "tools", value: "bash, read_file, write_file, edit_file" },
        { label: "tool calls", value: "5 (bash 3, read_file 1, write_file 1)" },
        { label: "commands", value: "3 run · 1 non-zero exit · 1 timed out · 1 output cut" },
        { label: "unanswered", value: "1 call" },
        { label: "command time", value: "1.4 s" },
        { label: "tests", value: "6 passed · 0 failed" },
      ],
    });
    // No tools and no calls: no header; tools but no commands: "Tool calls".
    expect(episodeToolFacts({ args: {}, tools: [], score: null }, transcriptEntries(messages.slice(0, 2)))).toBeNull();
    const calc = episodeToolFacts({ args: {}, tools: [{ type: "function", function: { name: "calculator", parameters: {} } }], score: null }, []);
    expect(calc?.title).toBe("Tool calls");
    expect(calc?.facts).toContainEqual({ label: "tool calls", value: "none" });
  });
});

describe("collapsing", () => {
  it("collapses past 20 lines or 2,000 characters and sizes the text in lines and bytes", () => {
    expect(startsCollapsed("a\n".repeat(20))).toBe(false);
    expect(startsCollapsed("a\n".repeat(21))).toBe(true);
    expect(startsCollapsed("a".repeat(2001))).toBe(true);
    expect(sizeText("")).toBe("0 lines · 0 B");
    expect(sizeText("one\n")).toBe("1 line · 4 B");
    expect(sizeText("x\n".repeat(1024))).toBe("1024 lines · 2.0 KB");
  });
});
