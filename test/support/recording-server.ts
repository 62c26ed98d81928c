import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** One request a recording server received. */
export interface RecordedRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface RecordingServer {
  /** Base URL ending in /v1, as a client would be told to use. */
  baseURL: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/**
 * An HTTP server on 127.0.0.1 that records every request and answers any chat completion
 * with `reply` (default "Yes": what an attacker posing as a judge would say). Security
 * tests point clients at it and assert it received nothing; judge tests assert the key
 * it did receive.
 */
export async function startRecordingServer(reply = "Yes"): Promise<RecordingServer> {
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          id: "chatcmpl-rec",
          object: "chat.completion",
          created: Math.floor(Date.now() / 1000),
          model: "any",
          choices: [{ index: 0, message: { role: "assistant", content: reply }, finish_reason: "stop", logprobs: null }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
