import { z } from "zod";
import type { ChatMessage, ToolCall, ToolDefinition } from "../protocol/index.js";

export interface ToolContext<State> {
  /** The episode's state; a tool may change it (stateful tools), the change is stored with the step. */
  state: State;
  /** Aborted when the tool's time limit passes. */
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
  run(args: z.infer<Params>, ctx: ToolContext<State>): string | Promise<string>;
}

/** @example defineTool({ name: "add", description: "Adds", parameters: z.object({ a: z.number(), b: z.number() }), run: ({ a, b }) => String(a + b) }) */
export function defineTool<State, Params extends z.ZodObject>(tool: Tool<State, Params>): Tool<State> {
  return tool as unknown as Tool<State>;
}

export function toolDefinition(tool: Tool<never>): ToolDefinition {
  const schema = z.toJSONSchema(tool.parameters, { target: "draft-2020-12", io: "input" }) as Record<string, unknown>;
  delete schema.$schema;
  return { type: "function", function: { name: tool.name, description: tool.description, parameters: schema } };
}

export const DEFAULT_TOOL_TIMEOUT_MS = 10_000;

async function withTimeout<T>(run: (signal: AbortSignal) => Promise<T>, ms: number, name: string): Promise<T> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new Error(`tool "${name}" timed out after ${ms} ms`));
    }, ms);
  });
  try {
    return await Promise.race([run(controller.signal), timeout]);
  } finally {
    // Guarded: the Workers typings take only a timer id here, not undefined.
    if (timer !== undefined) clearTimeout(timer);
  }
}

/**
 * Executes the assistant's tool calls in order (a later call may depend on state an
 * earlier one set). A failing call becomes an error message to the model, never a
 * failed step.
 */
export async function executeToolCalls<State>(
  tools: readonly Tool<State>[],
  calls: readonly ToolCall[],
  state: State,
): Promise<{ messages: ChatMessage[]; state: State; errors: number }> {
  const messages: ChatMessage[] = [];
  let errors = 0;
  for (const call of calls) {
    const tool = tools.find((t) => t.name === call.function.name);
    let content: string;
    if (!tool) {
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
        const parsed = tool.parameters.safeParse(raw);
        if (!parsed.success) {
          throw new Error(`invalid arguments: ${parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ")}`);
        }
        content = await withTimeout(
          async (signal) => String(await tool.run(parsed.data, { state, signal })),
          tool.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
          tool.name,
        );
      } catch (err) {
        errors++;
        content = `Error: ${err instanceof Error ? err.message : String(err)}`;
      }
    }
    messages.push({ role: "tool", tool_call_id: call.id, content });
  }
  return { messages, state, errors };
}
