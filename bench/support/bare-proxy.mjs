/* global process, fetch, Buffer, console, URL */
// The floor of any Node proxy hop on this machine, for `npm run bench:harness`: a bare
// node:http server that reads the body and forwards it to UPSTREAM + the request's path after
// /v1, answering with the upstream's bytes. No key check, no parsing, no storage. Two clients
// for the upstream hop: `fetch` (undici's fetch, keep-alive: what edgegym's endpoint uses) or
// `http` (node:http.request with a keep-alive Agent).
//
//   node bench/support/bare-proxy.mjs http://127.0.0.1:PORT/v1 fetch|http   → prints {"base_url": "http://127.0.0.1:N/v1", "pid": …}
import { Agent, createServer, request } from "node:http";

const upstream = new URL(process.argv[2].replace(/\/+$/, ""));
const mode = process.argv[3] ?? "fetch";
const agent = new Agent({ keepAlive: true });
const target = (url) => `${upstream.pathname}${url.replace(/^\/v1/, "")}`;

async function readAll(stream) {
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
}

function viaFetch(url, body) {
  return fetch(`${upstream.origin}${target(url)}`, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer sk-bare-proxy" }, body }).then(async (answer) => ({
    status: answer.status,
    body: Buffer.from(await answer.arrayBuffer()),
  }));
}

function viaHttp(url, body) {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: upstream.hostname, port: upstream.port, path: target(url), method: "POST", agent, headers: { "content-type": "application/json", "content-length": body.length, authorization: "Bearer sk-bare-proxy" } },
      (res) => readAll(res).then((b) => resolve({ status: res.statusCode ?? 502, body: b }), reject),
    );
    req.on("error", reject);
    req.end(body);
  });
}

const server = createServer(async (req, res) => {
  try {
    const answer = await (mode === "http" ? viaHttp : viaFetch)(req.url ?? "/", await readAll(req));
    res.writeHead(answer.status, { "content-type": "application/json", "content-length": answer.body.length }).end(answer.body);
  } catch (err) {
    res.writeHead(502, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: String(err) } }));
  }
});
server.listen(0, "127.0.0.1", () => {
  console.log(JSON.stringify({ base_url: `http://127.0.0.1:${server.address().port}/v1`, pid: process.pid }));
});
process.stdin.resume();
process.stdin.on("end", () => process.exit(0));
