import { z } from "zod";
import type { ChatMessage, ToolCall, ToolDefinition } from "../protocol/index.js";

export interface ToolContext<State> {
  /** The episode's state; a tool may change it (stateful tools), the change is stored with the step. */
  state: State;
  /** Aborted when the tool's time limit passes, or when the client that sent the step goes away. */
  signal: AbortSignal;
}

/**
 * A function the model can call. Arguments are validated by `parameters` before `run`
 * sees them; what `run` returns (or the error it throws) goes back to the model as a
 * tool message.
 */
export interface Tool<State = unknown, Params extends z.ZodObject = z.ZodObject> {
  name: string;
  description: string;
  parameters: Params;
  /** Default 10 s. */
  timeoutMs?: number;
  /**
   * Arguments the environment supplies from the episode's state instead of the model:
   * removed from the JSON Schema the model sees, and injected (overriding anything the
   * model wrote under those names) before `parameters` validates the call. An injected
   * object is the state's own, so a tool that writes to it writes the episode's state.
   *
   * @example hiddenArgs: { board: (state) => state.board }
   */
  hiddenArgs?: HiddenArgs<State, z.infer<Params>>;
  run(args: z.infer<Params>, ctx: ToolContext<State>): string | Promise<string>;
}

/**
 * Per hidden argument, how to read it from the state. (Method-shaped so that a tool of a
 * specific state type still fits where tools of a wider state are held, as `run` does.)
 */
export type HiddenArgs<State, Args> = { [K in keyof Args]?: { read(state: State): Args[K] }["read"] };

/** The names of a tool's hidden arguments. */
export function hiddenArgNames(tool: Pick<Tool<never>, "hiddenArgs">): string[] {
  return Object.keys(tool.hiddenArgs ?? {});
}

/** The hidden arguments' values for this call, read from the state (by reference). */
function hiddenValues<State>(tool: Tool<State>, state: State): Record<string, unknown> {
  const hidden = (tool.hiddenArgs ?? {}) as Record<string, (state: State) => unknown>;
  return Object.fromEntries(Object.entries(hidden).map(([name, read]) => [name, read(state)]));
}

/**
 * Validates a call's arguments with the hidden ones injected. The parsed copy of a hidden
 * value is then swapped back for the state's own reference (zod copies objects), so a
 * tool writing to it writes the state.
 */
function parseToolArgs<State>(tool: Tool<State>, raw: unknown, state: State): ReturnType<Tool<State>["parameters"]["safeParse"]> {
  if (!tool.hiddenArgs || typeof raw !== "object" || raw === null || Array.isArray(raw)) return tool.parameters.safeParse(raw);
  const hidden = hiddenValues(tool, state);
  const parsed = tool.parameters.safeParse({ ...(raw as Record<string, unknown>), ...hidden });
  if (parsed.success) Object.assign(parsed.data, hidden);
  return parsed;
}

/** @example defineTool({ name: "add", description: "Adds", parameters: z.object({ a: z.number(), b: z.number() }), run: ({ a, b }) => String(a + b) }) */
export function defineTool<State, Params extends z.ZodObject>(tool: Tool<State, Params>): Tool<State> {
  return tool as unknown as Tool<State>;
}

export function toolDefinition(tool: Tool<never>): ToolDefinition {
  const hidden = hiddenArgNames(tool);
  const mask = Object.fromEntries(hidden.map((k) => [k, true] as const)) as Record<string, true> as never;
  const visible = hidden.length ? tool.parameters.omit(mask) : tool.parameters;
  const schema = z.toJSONSchema(visible, { target: "draft-2020-12", io: "input" }) as Record<string, unknown>;
  delete schema.$schema;
  return { type: "function", function: { name: tool.name, description: tool.description, parameters: schema } };
}

export const DEFAULT_TOOL_TIMEOUT_MS = 10_000;

/**
 * Tool calls run per assistant message unless the environment says otherwise. A model
 * that emits hundreds of calls in one message would otherwise make one step cost
 * hundreds of tool runs; the calls past the cap are answered, not run.
 */
export const DEFAULT_MAX_TOOL_CALLS_PER_MESSAGE = 16;
/** The most an environment may allow: keeps a step's work bounded whatever an author sets. */
export const MAX_TOOL_CALLS_PER_MESSAGE_LIMIT = 256;

export interface ToolRunOptions {
  /** Calls past this many are not run; each gets an error message instead. Default DEFAULT_MAX_TOOL_CALLS_PER_MESSAGE. */
  maxCalls?: number | undefined;
  /**
   * The request's signal: when it aborts (the client went away) the running tool's own
   * signal aborts too and the whole call fails with the abort reason, so the caller
   * stores nothing and a retry of the step runs it afresh.
   */
  signal?: AbortSignal | undefined;
}

async function withTimeout<T>(run: (signal: AbortSignal) => Promise<T>, ms: number, name: string, outer: AbortSignal | undefined): Promise<T> {
  const controller = new AbortController();
  const signal = outer ? AbortSignal.any([controller.signal, outer]) : controller.signal;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const stopped = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new Error(`tool "${name}" timed out after ${ms} ms`));
    }, ms);
    if (outer) {
      onAbort = () => reject(outer.reason);
      outer.addEventListener("abort", onAbort, { once: true });
    }
  });
  try {
    return await Promise.race([run(signal), stopped]);
  } finally {
    // Guarded: the Workers typings take only a timer id here, not undefined.
    if (timer !== undefined) clearTimeout(timer);
    if (onAbort) outer?.removeEventListener("abort", onAbort);
  }
}

/**
 * Executes the assistant's tool calls in order (a later call may depend on state an
 * earlier one set). A failing call becomes an error message to the model, never a
 * failed step; so do the calls past `maxCalls`, which are not run. Every call gets its
 * tool message, so the transcript stays one the model's chat template accepts. Only an
 * abort of `signal` fails the whole call.
 */
export async function executeToolCalls<State>(
  tools: readonly Tool<State>[],
  calls: readonly ToolCall[],
  state: State,
  options: ToolRunOptions = {},
): Promise<{ messages: ChatMessage[]; state: State; errors: number }> {
  const messages: ChatMessage[] = [];
  const maxCalls = options.maxCalls ?? DEFAULT_MAX_TOOL_CALLS_PER_MESSAGE;
  const outer = options.signal;
  let errors = 0;
  for (const [i, call] of calls.entries()) {
    outer?.throwIfAborted();
    const tool = tools.find((t) => t.name === call.function.name);
    let content: string;
    if (i >= maxCalls) {
      errors++;
      content = `Error: not run: at most ${maxCalls} tool calls are run per message; make the remaining calls in a later message.`;
    } else if (!tool) {
      errors++;
      content = `Error: unknown tool "${call.function.name}". Available tools: ${tools.map((t) => t.name).join(", ") || "none"}.`;
    } else {
      try {
        let raw: unknown;
        try {
          raw = call.function.arguments.trim() === "" ? {} : JSON.parse(call.function.arguments);
        } catch {
          throw new Error("arguments are not valid JSON");
        }
        const parsed = parseToolArgs(tool, raw, state);
        if (!parsed.success) {
          throw new Error(`invalid arguments: ${parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ")}`);
        }
        content = await withTimeout(
          async (signal) => String(await tool.run(parsed.data, { state, signal })),
          tool.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
          tool.name,
          outer,
        );
      } catch (err) {
        if (outer?.aborted) throw outer.reason;
        errors++;
        content = `Error: ${err instanceof Error ? err.message : String(err)}`;
      }
    }
    messages.push({ role: "tool", tool_call_id: call.id, content });
  }
  return { messages, state, errors };
}
