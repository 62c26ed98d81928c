import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** What the judge server answers one prompt with, after an optional delay. */
export interface JudgeDecision {
  reply: string;
  delayMs?: number;
  status?: number;
}

function normalise(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s.]/gu, " ")
    .replace(/\b(the|a|an)\b/g, " ")
    .replace(/\.(?!\d)/g, " ")
    .replace(/\s+/g, " ")
    .trim();
}

/**
 * The default rule: reads the reference and the response out of edgegym's default judge
 * prompt and says "yes" when the normalised response equals the reference or contains it
 * as whole words, "no" otherwise. Deterministic, so tests know every verdict in advance.
 */
export function sameAnswerRule(prompt: string): JudgeDecision {
  const reference = /Reference answer:\n([\s\S]*?)\n\nResponse:/.exec(prompt)?.[1];
  const response = /\n\nResponse:\n([\s\S]*?)\n\nDoes the response/.exec(prompt)?.[1];
  if (reference === undefined || response === undefined) return { reply: "I cannot tell." };
  const ref = normalise(reference);
  const res = normalise(response);
  const same = res === ref || (ref !== "" && ` ${res} `.includes(` ${ref} `));
  return { reply: same ? "Yes" : "No." };
}

export interface RuleJudgeServer {
  /** Base URL to give the openai client, ending in /v1. */
  baseURL: string;
  /** Every user prompt received, in arrival order. */
  prompts: string[];
  /** The most requests that were being answered at once. */
  maxInFlight(): number;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * A small OpenAI-compatible chat-completions server on 127.0.0.1 whose "model" is a rule.
 * Real HTTP, real JSON: the code under test talks to it through the real openai client.
 */
export async function startRuleJudgeServer(decide: (prompt: string) => JudgeDecision = sameAnswerRule): Promise<RuleJudgeServer> {
  const prompts: string[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const server: Server = createServer((req, res) => {
    void (async () => {
      if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
        res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "not found" } }));
        return;
      }
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        const body = JSON.parse(await readBody(req)) as { model: string; messages: { role: string; content: string }[] };
        const prompt = body.messages.filter((m) => m.role === "user").map((m) => m.content).join("\n");
        prompts.push(prompt);
        const decision = decide(prompt);
        if (decision.delayMs) {
          await new Promise<void>((resolve) => {
            const t = setTimeout(() => { timers.delete(t); resolve(); }, decision.delayMs);
            timers.add(t);
          });
        }
        if (res.destroyed) return;
        if (decision.status && decision.status !== 200) {
          res.writeHead(decision.status, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: decision.reply, type: "server_error" } }));
          return;
        }
        res.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({
            id: `chatcmpl-${prompts.length}`,
            object: "chat.completion",
            created: Math.floor(Date.now() / 1000),
            model: body.model,
            choices: [{ index: 0, message: { role: "assistant", content: decision.reply }, finish_reason: "stop", logprobs: null }],
            usage: { prompt_tokens: Math.ceil(prompt.length / 4), completion_tokens: 1, total_tokens: Math.ceil(prompt.length / 4) + 1 },
          }),
        );
      } finally {
        inFlight--;
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    prompts,
    maxInFlight: () => maxInFlight,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A loopback URL nothing listens on (a port just freed), for connection-refused cases. */
export async function closedPortURL(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/v1`;
}
