import { z } from "zod";
import { defineTool } from "../../tools.js";
import type { Tool } from "../../tools.js";
import { SandboxError, type SandboxProvider } from "../../sandbox/types.js";
import { describeExec } from "./box-text.js";
import type { HarborState } from "./state.js";

/** Output one command may return to the model, in bytes (the rest is counted, not kept). */
export const COMMAND_OUTPUT_BYTES = 16_384;
/** A command's own time limit when it names none, and the most it may ask for. */
export const DEFAULT_COMMAND_SEC = 120;
export const MAX_COMMAND_SEC = 1800;
/** A file read returns at most this much. */
export const READ_FILE_BYTES = 65_536;
/** A file written or edited: at most this much. */
export const WRITE_FILE_BYTES = 1_048_576;

/** The box's settings a tool needs: all from the state, so any server process can run the next call. */
interface BoxSettings {
  user?: string;
  workdir?: string;
  env?: Record<string, string>;
}

const settingsOf = (state: HarborState): BoxSettings => ({
  ...(state.agentUser ? { user: state.agentUser } : {}),
  ...(state.workdir ? { workdir: state.workdir } : {}),
  ...(Object.keys(state.env).length ? { env: state.env } : {}),
});

/**
 * Runs a tool's work in the box. A box that is gone ends the episode (`sandbox_lost`, never
 * a silent fresh start); a missing or oversized file is the model's to fix, so it reads why.
 */
async function onBox(state: HarborState, file: { path: string; limit: number; hint: string } | null, work: () => Promise<string>): Promise<string> {
  try {
    return await work();
  } catch (err) {
    if (!(err instanceof SandboxError)) throw err;
    if (err.code === "sandbox_lost") {
      state.lost = true;
      return `Error: sandbox_lost: ${err.message}`;
    }
    if (file && err.code === "file_not_found") return `Error: no file at ${file.path}`;
    if (file && err.code === "file_too_large") return `Error: ${file.path} is larger than ${file.limit} bytes; ${file.hint}`;
    throw err;
  }
}

/** Seconds of command time the agent has left (null: no limit). */
export function secondsLeft(state: HarborState): number | null {
  return state.agentTimeoutSec === null ? null : Math.max(0, state.agentTimeoutSec - state.commandMs / 1000);
}

/** `bash`: one shell command in the episode's container; the exit code and output come back. */
function bashTool(provider: SandboxProvider): Tool<HarborState> {
  return defineTool<HarborState, z.ZodObject<{ command: z.ZodString; timeout_sec: z.ZodOptional<z.ZodNumber> }>>({
    name: "bash",
    description:
      "Runs a shell command (bash -c) in your own Linux container and returns its exit code and output (stdout and stderr together). " +
      "Files and installed packages persist between calls; each call starts a fresh shell (cd and variables do not carry over). " +
      `Output past ${COMMAND_OUTPUT_BYTES} bytes is cut; a command running past its time limit is killed.`,
    parameters: z
      .object({
        command: z.string().min(1).max(100_000).meta({ description: "The command, run as `bash -c COMMAND`." }),
        timeout_sec: z.number().int().min(1).max(MAX_COMMAND_SEC).optional().meta({ description: `Time limit of this command in seconds (default ${DEFAULT_COMMAND_SEC}).` }),
      })
      .strict(),
    // The provider enforces the command's own limit; this outer one only guards against a stuck provider.
    timeoutMs: (MAX_COMMAND_SEC + 60) * 1000,
    run: async ({ command, timeout_sec }, { state }) => {
      const left = secondsLeft(state);
      if (left !== null && left <= 0) return `Error: the agent's time for commands (${state.agentTimeoutSec} s) is used up; nothing was run.`;
      const limit = Math.max(1, Math.floor(Math.min(timeout_sec ?? DEFAULT_COMMAND_SEC, left ?? Infinity)));
      return onBox(state, null, async () => {
        const result = await provider.exec(state.sandbox.id, ["bash", "-c", command], { timeoutMs: limit * 1000, maxOutputBytes: COMMAND_OUTPUT_BYTES, ...settingsOf(state) });
        state.commandMs += result.durationMs;
        state.commands += 1;
        return describeExec(result, limit);
      });
    },
  });
}

const Path = z.string().min(1).max(4096).meta({ description: "Absolute path, or relative to the working directory." });

/** `read_file`: a text file's content, cut at READ_FILE_BYTES. */
function readFileTool(provider: SandboxProvider): Tool<HarborState> {
  return defineTool<HarborState, z.ZodObject<{ path: typeof Path }>>({
    name: "read_file",
    description: `Returns a file's text from your container (at most ${READ_FILE_BYTES} bytes; use bash with sed or head for parts of bigger files).`,
    parameters: z.object({ path: Path }).strict(),
    timeoutMs: 60_000,
    run: async ({ path }, { state }) =>
      onBox(state, { path, limit: READ_FILE_BYTES, hint: "read parts of it with bash (sed -n, head, tail)" }, async () => new TextDecoder().decode(await provider.readFile(state.sandbox.id, resolvePath(state, path), READ_FILE_BYTES))),
  });
}

/** `write_file`: creates or replaces a file (parent directories made). */
function writeFileTool(provider: SandboxProvider): Tool<HarborState> {
  return defineTool<HarborState, z.ZodObject<{ path: typeof Path; content: z.ZodString }>>({
    name: "write_file",
    description: "Creates or replaces a text file in your container with the given content (parent directories are created).",
    parameters: z.object({ path: Path, content: z.string().max(WRITE_FILE_BYTES).meta({ description: "The file's whole new content." }) }).strict(),
    timeoutMs: 60_000,
    run: async ({ path, content }, { state }) =>
      onBox(state, null, async () => {
        await provider.writeFile(state.sandbox.id, resolvePath(state, path), content, state.agentUser ? { user: state.agentUser } : {});
        return `wrote ${new TextEncoder().encode(content).length} bytes to ${path}`;
      }),
  });
}

/** `edit_file`: replaces one exact occurrence of a string, as editors for agents do (an ambiguous edit is refused, not guessed). */
function editFileTool(provider: SandboxProvider): Tool<HarborState> {
  return defineTool<HarborState, z.ZodObject<{ path: typeof Path; old_str: z.ZodString; new_str: z.ZodString }>>({
    name: "edit_file",
    description: "Replaces the one occurrence of old_str in a text file with new_str. old_str must appear exactly once (include surrounding lines to make it unique).",
    parameters: z
      .object({
        path: Path,
        old_str: z.string().min(1).max(WRITE_FILE_BYTES).meta({ description: "Exact text to replace, whitespace included." }),
        new_str: z.string().max(WRITE_FILE_BYTES).meta({ description: "Replacement text." }),
      })
      .strict(),
    timeoutMs: 60_000,
    run: async ({ path, old_str, new_str }, { state }) => {
      const file = resolvePath(state, path);
      return onBox(state, { path, limit: WRITE_FILE_BYTES, hint: "edit it with bash" }, async () => {
        const text = new TextDecoder().decode(await provider.readFile(state.sandbox.id, file, WRITE_FILE_BYTES));
        const first = text.indexOf(old_str);
        if (first < 0) return `Error: old_str does not appear in ${path}; nothing changed`;
        if (text.indexOf(old_str, first + 1) >= 0) return `Error: old_str appears more than once in ${path}; add surrounding lines so it is unique; nothing changed`;
        const next = text.slice(0, first) + new_str + text.slice(first + old_str.length);
        await provider.writeFile(state.sandbox.id, file, next, state.agentUser ? { user: state.agentUser } : {});
        return `edited ${path}: replaced ${old_str.length} characters with ${new_str.length}`;
      });
    },
  });
}

/** A relative path is taken from the task's working directory (the image's, when the task names none: `/`). */
function resolvePath(state: HarborState, path: string): string {
  if (path.startsWith("/")) return path;
  const base = state.workdir ?? "/";
  return `${base.replace(/\/$/, "")}/${path}`;
}

export function harborTools(provider: SandboxProvider): Tool<HarborState>[] {
  return [bashTool(provider), readFileTool(provider), writeFileTool(provider), editFileTool(provider)];
}
