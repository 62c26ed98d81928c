import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { contentText, type ChatMessage, type ToolCall, type ToolDefinition } from "../../src/protocol/index.js";

/** What the scripted model was asked: the chat-completion body as received. */
export interface ScriptedRequest {
  model: string;
  messages: ChatMessage[];
  tools?: ToolDefinition[];
  [key: string]: unknown;
}

/** One reply: an assistant message, an HTTP error, or silence (for timeouts). */
export type ScriptedReply =
  | { content?: string | null; tool_calls?: ToolCall[]; finish_reason?: string; delayMs?: number }
  | { status: number; message?: string; headers?: Record<string, string>; delayMs?: number }
  | { hang: true };

export type ScriptedPolicy = (request: ScriptedRequest, callNumber: number) => ScriptedReply | Promise<ScriptedReply>;

export interface ScriptedModelServer {
  /** Base URL to give an OpenAI client, ending in /v1. */
  baseUrl: string;
  requests: ScriptedRequest[];
  /** The Authorization header of each request, in order. */
  authorizations: (string | undefined)[];
  close(): Promise<void>;
}

/** Token counts a tokenizer would roughly give (4 characters a token), deterministic. */
const tokens = (text: string): number => Math.ceil(text.length / 4);

/** The text of the last user message: what a task-following model answers. */
export function lastUserText(request: ScriptedRequest): string {
  const user = [...request.messages].reverse().find((m) => m.role === "user");
  return user ? contentText(user.content) : "";
}

/** A "model" that does reverse-text perfectly: instant and deterministic, for orchestration tests and benchmarks. */
export const reverseLastUser: ScriptedPolicy = (request) => ({ content: `<answer>${Array.from(lastUserText(request)).reverse().join("")}</answer>` });

/** A request's body as text (the test servers' one reader). */
export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/**
 * A small OpenAI-compatible chat-completions server for tests: a real HTTP server on
 * 127.0.0.1 whose answers come from `policy`, so a test can script tool calls, rate
 * limits, 5xx and hangs and drive them through the real `openai` client.
 */
export async function startScriptedModel(policy: ScriptedPolicy, opts: { port?: number; record?: boolean } = {}): Promise<ScriptedModelServer> {
  const requests: ScriptedRequest[] = [];
  const authorizations: (string | undefined)[] = [];
  let calls = 0;
  const hanging = new Set<ServerResponse>();
  const handler = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method === "GET" && req.url?.endsWith("/models")) {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ object: "list", data: [{ id: "scripted", object: "model" }] }));
      return;
    }
    if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "not found" } }));
      return;
    }
    const body = JSON.parse(await readBody(req)) as ScriptedRequest;
    if (opts.record !== false) {
      requests.push(body);
      authorizations.push(req.headers.authorization);
    }
    const reply = await policy(body, ++calls);
    if ("hang" in reply) {
      hanging.add(res);
      res.on("close", () => hanging.delete(res));
      return;
    }
    if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
    if ("status" in reply) {
      res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers }).end(JSON.stringify({ error: { message: reply.message ?? `scripted ${reply.status}`, type: "scripted" } }));
      return;
    }
    const content = reply.content === undefined ? (reply.tool_calls ? null : "") : reply.content;
    const promptTokens = tokens(body.messages.map((m) => contentText(m.content)).join("\n"));
    const completionTokens = tokens((content ?? "") + JSON.stringify(reply.tool_calls ?? ""));
    res.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({
        id: `chatcmpl-${calls}`,
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [
          {
            index: 0,
            message: { role: "assistant", content, ...(reply.tool_calls ? { tool_calls: reply.tool_calls } : {}) },
            finish_reason: reply.finish_reason ?? (reply.tool_calls ? "tool_calls" : "stop"),
          },
        ],
        usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
      }),
    );
  };
  const server: Server = createServer((req, res) => {
    handler(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: String(err) } }));
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    authorizations,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
