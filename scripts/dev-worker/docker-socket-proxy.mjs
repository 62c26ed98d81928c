#!/usr/bin/env node
/**
 * A unix-socket proxy in front of the Docker daemon's socket, for WRANGLER_DOCKER_HOST under
 * `wrangler dev` with Cloudflare Containers (dev only: containers-dev.mjs starts it when needed).
 *
 * workerd reads the default bridge's gateway from `GET /networks/bridge` (`IPAM.Config[].Gateway`)
 * and fails to start any container without it ("getaddrinfo(): DNS lookup failed. host = ;").
 * Docker 20.10 leaves `Gateway` out when the bridge's address is automatic. This proxy passes
 * every byte through unchanged (requests, chunked bodies, streamed responses, and the raw streams
 * of hijacked/upgraded connections: attach, exec start, BuildKit sessions), except the answers to
 * `GET [/v1.NN]/networks/<name or id>` (and the `GET /networks` list): where a bridge network's
 * IPv4 `IPAM.Config` entry lacks `Gateway`, it is filled in with the address of the network's
 * interface (`com.docker.network.bridge.name`, docker0 for the default bridge) inside the subnet,
 * else the subnet's first host address (what Docker picks).
 *
 * Assumes clients do not pipeline requests (Go's net/http, kj, curl and Node do not): a request's
 * answer is complete before the next request head arrives on the same connection.
 *
 *   node scripts/dev-worker/docker-socket-proxy.mjs SOCKET_PATH   # serves until SIGINT/SIGTERM
 *
 * The daemon socket is DOCKER_HOST's (unix://...) or /var/run/docker.sock. No dependencies.
 */
/* global console -- a plain Node script outside the TypeScript build */
import { Buffer } from "node:buffer";
import { execFile } from "node:child_process";
import { chmodSync, lstatSync, unlinkSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const MAX_HEAD = 64 * 1024;
const CRLF2 = Buffer.from("\r\n\r\n");
const NETWORK_PATH = /^(?:\/v[0-9.]+)?\/networks(?:\/[^/?]+)?\/?(?:\?.*)?$/;
// Endpoints whose connection Docker hijacks even without an Upgrade header.
const HIJACK_PATH = /^(?:\/v[0-9.]+)?\/(?:containers\/[^/]+\/attach|exec\/[^/]+\/start|session|grpc)(?:\?|\/?$)/;

/** The daemon's unix socket path: DOCKER_HOST's when it is a unix:// URL, else /var/run/docker.sock. */
export function daemonSocketPath(env = process.env) {
  const host = env.DOCKER_HOST?.trim();
  if (!host) return "/var/run/docker.sock";
  if (host.startsWith("unix://")) return host.slice("unix://".length);
  throw new Error(`DOCKER_HOST=${host} is not a unix:// socket; the Docker socket proxy serves unix sockets only`);
}

function ipv4ToInt(ip) {
  const parts = ip.split(".").map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) return null;
  return ((parts[0] << 24) | (parts[1] << 16) | (parts[2] << 8) | parts[3]) >>> 0;
}

function intToIpv4(n) {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
}

/** Parses an IPv4 CIDR; null for IPv6 or garbage. */
function parseCidr(cidr) {
  const [ip, bits] = String(cidr ?? "").split("/");
  const base = ipv4ToInt(ip ?? "");
  const len = Number(bits);
  if (base === null || !Number.isInteger(len) || len < 0 || len > 32) return null;
  const mask = len === 0 ? 0 : (0xffffffff << (32 - len)) >>> 0;
  return { network: (base & mask) >>> 0, mask, len };
}

function inSubnet(ip, subnet) {
  const n = ipv4ToInt(ip);
  return n !== null && ((n & subnet.mask) >>> 0) === subnet.network;
}

/**
 * IPv4 addresses of a network interface, up or not: os.networkInterfaces() lists only running
 * interfaces (docker0 without containers has NO-CARRIER), so `ip -4 addr show` is asked as well.
 */
export async function interfaceIpv4Addresses(name) {
  const found = (os.networkInterfaces()[name] ?? []).filter((a) => a.family === "IPv4").map((a) => a.address);
  if (found.length) return found;
  try {
    const { stdout } = await run("ip", ["-4", "-o", "addr", "show", "dev", name], { timeout: 5_000 });
    return [...stdout.matchAll(/\binet (\d+\.\d+\.\d+\.\d+)\//g)].map((m) => m[1]);
  } catch {
    return [];
  }
}

/** The interface Docker made for a bridge network. */
function bridgeInterface(network) {
  const named = network?.Options?.["com.docker.network.bridge.name"];
  if (named) return named;
  if (network?.Name === "bridge") return "docker0";
  return typeof network?.Id === "string" ? `br-${network.Id.slice(0, 12)}` : null;
}

/**
 * Fills in `Gateway` on a bridge network's IPv4 `IPAM.Config` entries that lack it. Mutates and
 * returns whether anything changed. `addressesOf(ifname)` lists an interface's IPv4 addresses.
 */
export async function fillBridgeGateway(network, addressesOf = interfaceIpv4Addresses) {
  if (!network || typeof network !== "object" || network.Driver !== "bridge") return false;
  const configs = network.IPAM?.Config;
  if (!Array.isArray(configs)) return false;
  let changed = false;
  for (const config of configs) {
    if (!config || config.Gateway) continue;
    const subnet = parseCidr(config.Subnet);
    if (!subnet || subnet.len > 30) continue;
    const ifname = bridgeInterface(network);
    const own = ifname ? (await addressesOf(ifname)).find((ip) => inSubnet(ip, subnet)) : undefined;
    config.Gateway = own ?? intToIpv4(subnet.network + 1);
    changed = true;
  }
  return changed;
}

/** Parses a request head (latin1): method, target, lower-cased header lists. */
function parseHead(head) {
  const lines = head.toString("latin1").split("\r\n");
  const [method = "", target = "", version = ""] = (lines[0] ?? "").split(" ");
  const headers = new Map();
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    headers.set(name, [...(headers.get(name) ?? []), line.slice(colon + 1).trim()]);
  }
  return { method, target, version, headers };
}

/** Asks the daemon itself for an intercepted request, fills in the gateway, writes the answer to the client. */
async function answerNetworkRequest(client, req, opts) {
  const headers = {};
  for (const [name, values] of req.headers) if (name !== "connection" && name !== "keep-alive") headers[name] = values.join(", ");
  const upstream = await new Promise((resolve, reject) => {
    const r = http.request({ socketPath: opts.upstream, method: "GET", path: req.target, headers, agent: false }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve({ res, body: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    r.on("error", reject);
    r.end();
  });
  let body = upstream.body;
  if (upstream.res.statusCode === 200) {
    try {
      const parsed = JSON.parse(body.toString("utf8"));
      const list = Array.isArray(parsed) ? parsed : [parsed];
      let changed = false;
      for (const network of list) if (await fillBridgeGateway(network, opts.addressesOf)) changed = true;
      if (changed) {
        body = Buffer.from(JSON.stringify(parsed) + "\n");
        opts.onRewrite?.(req.target);
      }
    } catch {
      // Not JSON: pass the body on as it came.
    }
  }
  const close = (req.headers.get("connection") ?? []).some((v) => /\bclose\b/i.test(v)) || req.version === "HTTP/1.0";
  const raw = upstream.res.rawHeaders;
  let out = `HTTP/1.1 ${upstream.res.statusCode} ${upstream.res.statusMessage || http.STATUS_CODES[upstream.res.statusCode] || ""}\r\n`;
  for (let i = 0; i < raw.length; i += 2) {
    if (/^(content-length|transfer-encoding|connection|keep-alive)$/i.test(raw[i])) continue;
    out += `${raw[i]}: ${raw[i + 1]}\r\n`;
  }
  out += `Content-Length: ${body.length}\r\n${close ? "Connection: close\r\n" : ""}\r\n`;
  client.write(Buffer.concat([Buffer.from(out, "latin1"), body]));
  return close;
}

function errorAnswer(err) {
  const body = JSON.stringify({ message: `docker socket proxy: ${err instanceof Error ? err.message : String(err)}` }) + "\n";
  return `HTTP/1.1 502 Bad Gateway\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

/** One client connection: scans request framing so that the network requests can be answered, forwards all else as it came. */
function handleConnection(client, opts) {
  const upstream = net.connect({ path: opts.upstream, allowHalfOpen: true });
  let state = "head"; // head | body | chunk-size | chunk-data | trailer | raw
  let head = Buffer.alloc(0);
  let remaining = 0; // bytes left in a Content-Length body or a chunk (with its CRLF)
  let line = Buffer.alloc(0); // a partial chunk-size or trailer line
  let rawAfterBody = false;
  const queue = [];
  let busy = false;
  let clientEnded = false;

  const forward = (buf) => {
    if (buf.length && !upstream.write(buf)) {
      client.pause();
      upstream.once("drain", () => client.resume());
    }
  };

  const endOfMessage = () => {
    state = rawAfterBody ? "raw" : "head";
    rawAfterBody = false;
  };

  /** Consumes `buf`; returns the unconsumed rest when an intercepted request must be answered first, with it. */
  const scan = (buf) => {
    let offset = 0;
    while (offset < buf.length) {
      if (state === "raw") {
        forward(buf.subarray(offset));
        return null;
      }
      if (state === "head") {
        head = head.length ? Buffer.concat([head, buf.subarray(offset)]) : buf.subarray(offset);
        const end = head.indexOf(CRLF2);
        if (end < 0) {
          if (head.length > MAX_HEAD) {
            // Not HTTP as we know it: stop looking, pass everything through.
            state = "raw";
            forward(head);
            head = Buffer.alloc(0);
          }
          return null;
        }
        const whole = head.subarray(0, end + 4);
        const rest = head.subarray(end + 4);
        head = Buffer.alloc(0);
        const req = parseHead(whole);
        const te = (req.headers.get("transfer-encoding") ?? []).join(",").toLowerCase();
        const length = Number((req.headers.get("content-length") ?? ["0"])[0]) || 0;
        const upgrade = req.headers.has("upgrade") || (req.headers.get("connection") ?? []).some((v) => /\bupgrade\b/i.test(v));
        rawAfterBody = upgrade || (req.method === "POST" && HIJACK_PATH.test(req.target)) || req.method === "CONNECT";
        if (req.method === "GET" && NETWORK_PATH.test(req.target) && !te.includes("chunked") && length === 0 && !upgrade) {
          return { req, rest };
        }
        forward(whole);
        if (te.includes("chunked")) state = "chunk-size";
        else if (length > 0) {
          state = "body";
          remaining = length;
        } else endOfMessage();
        buf = rest;
        offset = 0;
        continue;
      }
      if (state === "body" || state === "chunk-data") {
        const take = Math.min(remaining, buf.length - offset);
        forward(buf.subarray(offset, offset + take));
        offset += take;
        remaining -= take;
        if (remaining === 0) {
          if (state === "body") endOfMessage();
          else state = "chunk-size";
        }
        continue;
      }
      // chunk-size or trailer: line by line
      const nl = buf.indexOf(10, offset);
      if (nl < 0) {
        line = Buffer.concat([line, buf.subarray(offset)]);
        forward(buf.subarray(offset));
        return null;
      }
      const piece = buf.subarray(offset, nl + 1);
      forward(piece);
      const whole = Buffer.concat([line, piece]).toString("latin1").trim();
      line = Buffer.alloc(0);
      offset = nl + 1;
      if (state === "chunk-size") {
        const size = parseInt(whole.split(";")[0], 16);
        if (!Number.isFinite(size)) {
          state = "raw"; // malformed: stop parsing, keep forwarding
        } else if (size === 0) state = "trailer";
        else {
          state = "chunk-data";
          remaining = size + 2;
        }
      } else if (whole === "") endOfMessage();
    }
    return null;
  };

  const pump = async () => {
    if (busy) return;
    busy = true;
    try {
      while (queue.length) {
        const chunk = queue.shift();
        const intercept = scan(chunk);
        if (!intercept) continue;
        client.pause();
        let close = false;
        try {
          close = await answerNetworkRequest(client, intercept.req, opts);
        } catch (err) {
          client.write(errorAnswer(err));
          close = true;
        }
        if (close) {
          client.end();
          upstream.end();
          queue.length = 0;
          return;
        }
        endOfMessage();
        if (intercept.rest.length) queue.unshift(intercept.rest);
        client.resume();
      }
      if (clientEnded) upstream.end();
    } finally {
      busy = false;
    }
  };

  client.on("data", (chunk) => {
    queue.push(chunk);
    void pump();
  });
  client.on("end", () => {
    clientEnded = true;
    if (!busy && !queue.length) upstream.end();
  });
  upstream.pipe(client);
  const destroyBoth = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on("error", destroyBoth);
  upstream.on("error", (err) => {
    if (client.writable && !client.bytesWritten) client.end(errorAnswer(err));
    else client.destroy();
  });
  client.on("close", () => upstream.destroy());
}

/**
 * Starts the proxy on `socketPath` (an existing socket file there is replaced) in front of
 * `upstream` (the daemon's socket). Resolves once it listens: `{ socketPath, url, close() }`.
 */
export async function startDockerSocketProxy({ socketPath, upstream = daemonSocketPath(), addressesOf, onRewrite } = {}) {
  if (!socketPath) throw new Error("startDockerSocketProxy: socketPath is required");
  try {
    if (lstatSync(socketPath).isSocket()) unlinkSync(socketPath);
  } catch (err) {
    if (err?.code !== "ENOENT") throw err;
  }
  const sockets = new Set();
  const server = net.createServer({ allowHalfOpen: true, pauseOnConnect: false }, (client) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    handleConnection(client, { upstream, addressesOf, onRewrite });
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => {
      server.off("error", reject);
      resolve();
    });
  });
  // The socket is as powerful as the daemon's: owner only.
  chmodSync(socketPath, 0o600);
  return {
    socketPath,
    url: `unix://${socketPath}`,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const socketPath = process.argv[2];
  if (!socketPath || socketPath.startsWith("-")) {
    console.error("usage: node scripts/dev-worker/docker-socket-proxy.mjs SOCKET_PATH");
    process.exit(2);
  }
  const proxy = await startDockerSocketProxy({
    socketPath,
    onRewrite: (target) => console.error(`docker-socket-proxy: filled in the bridge gateway for GET ${target}`),
  });
  console.error(`docker-socket-proxy: ${proxy.url} -> unix://${daemonSocketPath()}`);
  const stop = () => void proxy.close().then(() => process.exit(0));
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
