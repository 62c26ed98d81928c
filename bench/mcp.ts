// `npm run bench:mcp`: the cost of playing through MCP. One client makes tool-math
// calculator calls sequentially against the Node server (built dist, better-sqlite3 on a
// file), in episodes of --calls calls: through edgegym's native step (POST
// /v1/episodes/{id}/step) and through the episode's MCP server (the official SDK client's
// callTool on /mcp/episodes/{id}). Prints the median and p90 latency per call (loopback)
// and the MCP connect (initialize + notification) per episode; and the same tools/call as
// one plain fetch, which separates the server's cost from the SDK client's.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startNodeServer } from "../test/support/node-server.js";

const { values } = parseArgs({ options: { episodes: { type: "string", default: "20" }, calls: { type: "string", default: "9" } } });
const episodes = Number(values.episodes);
const calls = Number(values.calls);
if (!(Number.isInteger(episodes) && episodes >= 1 && episodes <= 500) || !(Number.isInteger(calls) && calls >= 1 && calls <= 9)) {
  throw new Error("--episodes must be an integer in [1, 500], --calls in [1, 9] (tool-math allows 10 turns)");
}

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] as number;
const fmt = (xs: number[]) => `median ${quantile(xs, 0.5).toFixed(2)} ms, p90 ${quantile(xs, 0.9).toFixed(2)} ms (n=${xs.length})`;

const dir = mkdtempSync(join(tmpdir(), "edgegym-bench-mcp-"));
const server = await startNodeServer({ db: join(dir, "bench.db") });
const post = async (path: string, body: unknown) => {
  const res = await fetch(`${server.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as { episode_id: string };
};

try {
  const native: number[] = [];
  const mcp: number[] = [];
  const connects: number[] = [];
  const raw: number[] = [];
  for (let e = 0; e < episodes; e++) {
    const a = await post("/v1/envs/tool-math/episodes", { split: "eval", index: e });
    for (let turn = 0; turn < calls; turn++) {
      const t0 = performance.now();
      await post(`/v1/episodes/${a.episode_id}/step`, { turn, message: { role: "assistant", content: null, tool_calls: [{ id: `c${turn}`, type: "function", function: { name: "calculator", arguments: JSON.stringify({ expression: `${turn} * 7` }) } }] } });
      native.push(performance.now() - t0);
    }
    const b = await post("/v1/envs/tool-math/episodes", { split: "eval", index: e });
    const client = new Client({ name: "bench", version: "1.0.0" });
    const c0 = performance.now();
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp/episodes/${b.episode_id}`)));
    connects.push(performance.now() - c0);
    for (let turn = 0; turn < calls; turn++) {
      const t0 = performance.now();
      await client.callTool({ name: "calculator", arguments: { expression: `${turn} * 7` } });
      mcp.push(performance.now() - t0);
    }
    await client.close();
    // The same call as one plain POST: the server's share of the MCP cost, without the SDK client's.
    const d = await post("/v1/envs/tool-math/episodes", { split: "eval", index: e });
    for (let turn = 0; turn < calls; turn++) {
      const t0 = performance.now();
      const res = await fetch(`${server.url}/mcp/episodes/${d.episode_id}`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
        body: JSON.stringify({ jsonrpc: "2.0", id: turn + 1, method: "tools/call", params: { name: "calculator", arguments: { expression: `${turn} * 7` } } }),
      });
      await res.json();
      raw.push(performance.now() - t0);
    }
  }
  console.log(`tool-math calculator calls, sequential, one client, Node server on loopback (${episodes} episodes x ${calls} calls)`);
  console.log(`  native POST /v1/episodes/{id}/step : ${fmt(native)}`);
  console.log(`  MCP tools/call /mcp/episodes/{id}  : ${fmt(mcp)}`);
  console.log(`  MCP tools/call, plain fetch        : ${fmt(raw)}`);
  console.log(`  MCP connect (initialize)           : ${fmt(connects)}`);
} finally {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
