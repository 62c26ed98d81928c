import http from "node:http";
import https from "node:https";
import type { UpstreamPost } from "../model-endpoint/model-calls.js";

// Keep-alive pools: a harness episode calls its upstream once per turn, back to back.
const agents = { http: new http.Agent({ keepAlive: true, maxSockets: 256 }), https: new https.Agent({ keepAlive: true, maxSockets: 256 }) };

/**
 * The model endpoint's call to its upstream on Node, over node:http with keep-alive rather
 * than fetch: bench:harness measured fetch as 35% of the endpoint's server CPU, and a bare
 * proxy hop at 1.9 ms p50 with node:http against 3.3 ms with fetch (docs/performance.md).
 */
export const nodeUpstreamPost: UpstreamPost = (url, headers, body, timeoutMs) =>
  new Promise((resolve, reject) => {
    const target = new URL(url);
    const secure = target.protocol === "https:";
    const request = (secure ? https : http).request(
      target,
      { method: "POST", agent: secure ? agents.https : agents.http, headers: { ...headers, "Content-Length": Buffer.byteLength(body) }, timeout: timeoutMs },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => resolve({ status: response.statusCode ?? 502, text: Buffer.concat(chunks).toString("utf8") }));
        response.on("error", reject);
      },
    );
    const timer = setTimeout(() => request.destroy(new UpstreamTimeout(timeoutMs)), timeoutMs);
    request.on("close", () => clearTimeout(timer));
    request.on("timeout", () => request.destroy(new UpstreamTimeout(timeoutMs)));
    request.on("error", reject);
    request.end(body);
  });

/** The upstream took longer than the call's limit (its socket is cut). */
export class UpstreamTimeout extends Error {
  readonly timedOut = true;
  constructor(ms: number) {
    super(`the upstream took over ${ms / 1000} s`);
    this.name = "UpstreamTimeout";
  }
}
