/**
 * The HTTP calls the Harbor tests make of a server: JSON in, status, headers and JSON out,
 * and tool calls numbered so each test's ids stay distinct.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- replies are asserted field by field
export type Json = any;

export interface HarborHttp {
  api(method: string, path: string, body?: unknown): Promise<{ status: number; headers: Headers; body: Json }>;
  /** A reset of the `harbor` environment at one task. */
  reset(task: string): Promise<{ status: number; headers: Headers; body: Json }>;
  /** An assistant message at `turn`, with these tool calls. */
  step(id: string, turn: number, content: string, toolCalls?: unknown[]): Promise<{ status: number; headers: Headers; body: Json }>;
}

let callSeq = 0;

/** A tool call as an OpenAI-style assistant message carries it. */
export function toolCall(name: string, args: Record<string, unknown>): { id: string; type: "function"; function: { name: string; arguments: string } } {
  return { id: `call_${++callSeq}`, type: "function", function: { name, arguments: JSON.stringify(args) } };
}

/** The calls against a server's base URL, read at call time (the server may start after this is made). */
export function harborHttp(baseUrl: () => string): HarborHttp {
  const api: HarborHttp["api"] = async (method, path, body) => {
    const res = await fetch(`${baseUrl()}${path}`, { method, headers: body === undefined ? {} : { "content-type": "application/json" }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    return { status: res.status, headers: res.headers, body: await res.json() };
  };
  return {
    api,
    reset: (task) => api("POST", "/v1/envs/harbor/episodes", { args: { task } }),
    step: (id, turn, content, toolCalls = []) => api("POST", `/v1/episodes/${id}/step`, { turn, message: { role: "assistant", content, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) } }),
  };
}
