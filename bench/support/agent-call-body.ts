/**
 * A realistic Chat Completions request of a tool-calling coding agent (shaped like
 * mini-swe-agent 2.x's: a system prompt, the task as the user message, then per step the
 * assistant message as received (a THOUGHT and one `bash` call) and the `tool` message with
 * `{"returncode": N, "output": "..."}`), with the `bash` tool schema. Deterministic: the same
 * bytes on every call of every system, so latencies compare like for like.
 */

const BASH_TOOL = {
  type: "function",
  function: {
    name: "bash",
    description: "Execute a bash command in the repository's working directory and return its return code and output (stdout and stderr together). Each command runs in a new subshell; use && to chain dependent steps.",
    parameters: {
      type: "object",
      properties: { command: { type: "string", description: "The bash command to execute." } },
      required: ["command"],
    },
  },
};

const SYSTEM = [
  "You are a helpful assistant that can interact with a computer shell to solve programming tasks.",
  "Your response must contain exactly ONE bash tool call. Include a THOUGHT section before it explaining your reasoning and what you are trying to accomplish.",
  "Every command runs in a fresh subshell: directory or environment changes are not persistent. Prefix actions with `cd /path && ...` or write changes to files.",
  "Do not run interactive tools (editors, pagers); use sed, cat, head, tail, grep and python scripts instead.",
  "When you are done, and cannot make further progress, run `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT` on its own; do not combine it with any other command.",
].join("\n\n");

/** `lines` lines of plausible tool output (a log, a listing, source), ~`width` characters each. */
function output(kind: string, lines: number, width = 72): string {
  const out: string[] = [];
  for (let i = 0; i < lines; i++) {
    const base =
      kind === "ls"
        ? `-rw-r--r-- 1 root root ${String(1000 + ((i * 7919) % 90000)).padStart(6)} Nov 27 12:${String(i % 60).padStart(2, "0")} file_${i}.py`
        : kind === "log"
          ? `2026-11-27T12:${String(i % 60).padStart(2, "0")}:${String((i * 13) % 60).padStart(2, "0")}Z ${i % 7 === 0 ? "ERROR" : "INFO"} worker-${i % 4} request ${i} handled in ${(i * 37) % 400} ms`
          : `    def method_${i}(self, value: int) -> int:  # line ${i}: returns value scaled by ${i % 9}`;
    out.push(base.length > width ? base.slice(0, width) : base);
  }
  return out.join("\n");
}

const toolResult = (returncode: number, text: string) => JSON.stringify({ returncode, output: text });

/** The request body as a JSON string (≈12 KB by default: `steps` agent steps). */
export function agentCallBody(model = "edgegym-policy", steps = 4): string {
  const messages: unknown[] = [
    { role: "system", content: SYSTEM },
    {
      role: "user",
      content: `Please solve this issue: the service's log summary counts INFO lines as errors. Fix src/summary.py so that only ERROR-level lines are counted, and keep the CLI's output format.\n\nYou can execute bash commands and edit files to implement the necessary changes.\n\n## Recommended Workflow\n\n1. Analyze the codebase by finding and reading relevant files\n2. Create a script to reproduce the issue\n3. Edit the source code to resolve the issue\n4. Verify your fix works by running your script again\n5. Test edge cases to ensure your fix is robust\n6. Submit your changes and finish your work by issuing: echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n\n## Important Rules\n\n1. Every response must contain exactly one action\n2. The action must be enclosed in a bash tool call\n3. Directory or environment variable changes are not persistent.\n\n<system_information>\nLinux 6.1.0 #1 SMP x86_64 GNU/Linux\n</system_information>`,
    },
  ];
  const actions = [
    ["ls -la /app /app/src", "Let me look at the repository layout first.", output("ls", 24)],
    ["sed -n '1,60p' /app/src/summary.py", "The summary logic lives in src/summary.py; let me read it.", output("src", 40)],
    ["tail -n 40 /var/log/service/service.log", "Now the log format, to see how levels are written.", output("log", 40)],
    ["grep -n 'INFO\\|ERROR' /app/src/summary.py && python3 -m pytest -q tests 2>&1 | tail -n 20", "Find where levels are matched and run the tests.", output("log", 20)],
    ["sed -i 's/in line/in line.split()[1:2]/' /app/src/summary.py && python3 /app/src/summary.py /var/log/service/service.log", "Match the level field only.", output("log", 20)],
  ];
  for (let i = 0; i < steps; i++) {
    const [command, thought, out] = actions[i % actions.length] as [string, string, string];
    const id = `call_${i + 1}`;
    messages.push({ role: "assistant", content: `THOUGHT: ${thought}`, tool_calls: [{ id, type: "function", function: { name: "bash", arguments: JSON.stringify({ command }) } }] });
    messages.push({ role: "tool", tool_call_id: id, content: toolResult(0, out) });
  }
  return JSON.stringify({ model, messages, tools: [BASH_TOOL] });
}
