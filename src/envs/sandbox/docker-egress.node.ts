import { lookup } from "node:dns/promises";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import net, { type Socket } from "node:net";
import { networkInterfaces } from "node:os";
import type { Duplex } from "node:stream";
import { DockerEngine, isEngineStatus } from "./docker-engine.node.js";
import { guardBridge } from "./docker-egress-firewall.node.js";
import { addressInCidr, classify, judge, parseAllowlist, parseAuthority, normalizeHost, type AllowEntry, type EgressGuard } from "./docker-egress-policy.js";
import { SandboxError } from "./types.js";

/*
 * `allowlist` networks on Docker. The container sits on an internal bridge network (no
 * forwarding past the host, no traffic between containers), and its only way out is an HTTP
 * forward proxy that the server process runs on that network's gateway address. The proxy
 * knows the caller by its source address on the network, reads the caller's list from the
 * label the provider set at create (labels never change), and connects only to destinations
 * the list allows (docker-egress-policy.ts). On the host, traffic from the bridge to anything
 * but the proxy is rejected (docker-egress-firewall.node.ts). Anything that cannot be checked
 * (an unknown caller, a missing label, the daemon not answering) is refused.
 */

/** The container label holding its allowlist, a JSON array of entries. */
export const ALLOW_LABEL = "edgegym.allow";
const ROLE_LABEL = "edgegym.role";
const ROLE = "egress";

/** Where the provider's egress lives and how the proxy is bounded; every field has a default. */
export interface DockerEgressOptions {
  /** The internal network's name (default `edgegym-egress`); it is the bridge interface's name too when it fits 15 characters. */
  network?: string;
  /** The proxy's port on the gateway address (default 3128; 0 picks a free one). */
  port?: number;
  /**
   * `iptables` (default): the provider installs the host rules that keep the bridge's
   * containers off every host port but the proxy's, and refuses allowlist sandboxes when it
   * cannot (not root / no CAP_NET_ADMIN). `external`: the operator has installed equivalent
   * rules (docs/sandboxes.md); the provider trusts that.
   */
  firewall?: "iptables" | "external";
  /** Tunnels and requests in flight per container (default 64). */
  maxTunnelsPerContainer?: number;
  /** Client connections to the proxy at once, all containers together (default 2048). */
  maxConnections?: number;
  /** Limit of a connection to a destination, per address tried (default 10 s). */
  connectTimeoutMs?: number;
  /** A tunnel or connection with no bytes either way for this long is closed (default 120 s). */
  idleTimeoutMs?: number;
  /** Request line and headers, in bytes (default 16 KiB). */
  maxHeaderBytes?: number;
  /** How long the address → container map is trusted (default 3 s): the bound on a reused address being judged by its old owner's list. */
  sourceTtlMs?: number;
  /** Name resolution (default: the host's, `dns.lookup`); tests pin it. */
  resolve?: (host: string) => Promise<string[]>;
}

/**
 * The server's own HTTP service for sandboxes, answered on the proxy's address: requests
 * addressed to the proxy itself (origin-form `POST /path`, or an absolute URI naming the
 * gateway and port) go here instead of being judged as egress. What it serves authenticates
 * each request itself (harness episodes' model endpoints, by episode key).
 */
export type LocalService = (req: IncomingMessage, res: ServerResponse) => void;

/** What a container of an allowlist spec gets: its network, the label and the proxy environment. */
export interface EgressRoute {
  network: string;
  labels: Record<string, string>;
  env: Record<string, string>;
}

interface NetworkJson {
  Id: string;
  Name: string;
  Driver: string;
  Internal: boolean;
  IPAM: { Config: { Subnet?: string; Gateway?: string }[] | null } | null;
  Options: Record<string, string> | null;
  Labels: Record<string, string> | null;
  Containers: Record<string, { IPv4Address?: string }> | null;
}

export interface EgressNetwork {
  id: string;
  name: string;
  gateway: string;
  subnet: string;
  bridge: string;
}

const ICC = "com.docker.network.bridge.enable_icc";
const BRIDGE_NAME = "com.docker.network.bridge.name";

function describeNetwork(found: NetworkJson): EgressNetwork {
  const name = found.Name;
  const problems: string[] = [];
  if (found.Driver !== "bridge") problems.push(`driver ${found.Driver}, not bridge`);
  if (found.Internal !== true) problems.push("not internal");
  if (found.Labels?.[ROLE_LABEL] !== ROLE) problems.push(`no label ${ROLE_LABEL}=${ROLE}`);
  if (found.Options?.[ICC] !== "false") problems.push("containers on it may reach each other (enable_icc is not false)");
  const ipv4 = (found.IPAM?.Config ?? []).find((c) => c.Subnet && c.Gateway && net.isIPv4(c.Gateway));
  if (!ipv4) problems.push("no IPv4 subnet with a gateway");
  if (problems.length || !ipv4?.Subnet || !ipv4.Gateway) {
    // Never use a look-alike: a network of this name that is not internal would be the open internet.
    throw new SandboxError("sandbox_start_failed", `docker network ${name} cannot carry allowlist sandboxes: ${problems.join("; ")} (remove it; edgegym creates its own)`, { network: name });
  }
  return { id: found.Id, name, gateway: ipv4.Gateway, subnet: ipv4.Subnet, bridge: found.Options?.[BRIDGE_NAME] ?? `br-${found.Id.slice(0, 12)}` };
}

/**
 * The internal network of allowlist sandboxes, created when missing. Concurrent creators
 * (several server processes) are fine: the loser's 409 is followed by a second look.
 */
export async function ensureEgressNetwork(engine: DockerEngine, name: string): Promise<EgressNetwork> {
  const inspect = async (): Promise<NetworkJson | null> => {
    try {
      return await engine.json<NetworkJson>("GET", `/networks/${encodeURIComponent(name)}`);
    } catch (err) {
      if (isEngineStatus(err, 404)) return null;
      throw err;
    }
  };
  let found = await inspect();
  if (!found) {
    try {
      await engine.json("POST", "/networks/create", {
        json: {
          Name: name,
          Driver: "bridge",
          Internal: true,
          CheckDuplicate: true,
          Labels: { [ROLE_LABEL]: ROLE },
          // A known interface name lets an operator write host firewall rules for it.
          Options: { [ICC]: "false", ...(/^[A-Za-z0-9_.-]{1,15}$/.test(name) ? { [BRIDGE_NAME]: name } : {}) },
        },
      });
    } catch (err) {
      if (!isEngineStatus(err, 409)) throw err;
    }
    found = await inspect();
    if (!found) throw new SandboxError("sandbox_start_failed", `docker network ${name} vanished right after it was created`, { network: name });
  }
  return describeNetwork(found);
}

/** The proxy variables curl, pip, apt, npm and most HTTP clients follow (upper and lower case: curl reads only `http_proxy` lower). */
export function proxyEnv(gateway: string, port: number): Record<string, string> {
  const url = `http://${gateway}:${port}`;
  const noProxy = "localhost,127.0.0.1";
  return { HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url, NO_PROXY: noProxy, no_proxy: noProxy };
}

async function systemResolve(host: string): Promise<string[]> {
  return (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
}

function hostAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((a) => a.address.replace(/%.*$/, "")));
}

/** Address on the wire as text: IPv4-mapped IPv6 (a dual-stack socket) as plain IPv4. */
function sourceAddress(remote: string | undefined): string {
  return (remote ?? "").replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, "");
}

class Refusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

interface Admission {
  container: string;
  addresses: string[];
  release: () => void;
}

/** Spacing of look-ups that a miss triggers: a flood of unknown callers costs the daemon at most ten calls a second. */
const MISS_SPACING_MS = 100;

/**
 * Who is calling: source address → container (from the network's inspect, refreshed after
 * `ttlMs`, or at once on a miss so a container that just started is found), container → its
 * list (labels are immutable, so read once per container id).
 */
class Sources {
  private byAddress = new Map<string, string>();
  private lists = new Map<string, AllowEntry[] | null>();
  private fetchedAt = -Infinity;
  private startedAt = -Infinity;
  private inflight: Promise<void> | null = null;

  constructor(
    private readonly engine: DockerEngine,
    private readonly network: string,
    private readonly subnet: string,
    private readonly ttlMs: number,
  ) {}

  forget(): void {
    this.fetchedAt = -Infinity;
  }

  async identify(address: string): Promise<{ container: string; entries: AllowEntry[] | null } | null> {
    // Only containers of the egress network can be on its subnet; anything else is refused without a call.
    if (!addressInCidr(address, this.subnet)) return null;
    const fresh = Date.now() - this.fetchedAt < this.ttlMs;
    if (!fresh || !this.byAddress.has(address)) await this.refresh(!fresh);
    const container = this.byAddress.get(address);
    if (!container) return null;
    return { container, entries: await this.entries(container) };
  }

  private refresh(expired: boolean): Promise<void> {
    if (this.inflight) return this.inflight;
    const wait = expired ? 0 : Math.max(0, this.startedAt + MISS_SPACING_MS - Date.now());
    this.inflight = (async () => {
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      this.startedAt = Date.now();
      const found = await this.engine.json<NetworkJson>("GET", `/networks/${encodeURIComponent(this.network)}`, { timeoutMs: 5_000 });
      const byAddress = new Map<string, string>();
      for (const [id, endpoint] of Object.entries(found.Containers ?? {})) {
        const address = endpoint.IPv4Address?.split("/")[0];
        if (address) byAddress.set(address, id);
      }
      this.byAddress = byAddress;
      this.fetchedAt = this.startedAt;
      // Lists of containers that left the network are dropped (ids are never reused).
      const present = new Set(byAddress.values());
      for (const id of this.lists.keys()) if (!present.has(id)) this.lists.delete(id);
    })().finally(() => {
      this.inflight = null;
    });
    return this.inflight;
  }

  private async entries(container: string): Promise<AllowEntry[] | null> {
    if (this.lists.has(container)) return this.lists.get(container) ?? null;
    let labels: Record<string, string> | null;
    try {
      labels = (await this.engine.json<{ Config: { Labels: Record<string, string> | null } }>("GET", `/containers/${encodeURIComponent(container)}/json`, { timeoutMs: 5_000 })).Config.Labels;
    } catch (err) {
      if (isEngineStatus(err, 404)) return null;
      throw err;
    }
    let entries: AllowEntry[] | null = null;
    try {
      const hosts: unknown = JSON.parse(labels?.[ALLOW_LABEL] ?? "null");
      if (Array.isArray(hosts) && hosts.every((h) => typeof h === "string")) {
        const parsed = parseAllowlist(hosts);
        if ("entries" in parsed) entries = parsed.entries;
      }
    } catch {
      // Not JSON: no list, so nothing is allowed.
    }
    this.lists.set(container, entries);
    return entries;
  }
}

const HOP_BY_HOP = new Set(["connection", "proxy-connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade"]);

/** Raw header pairs without hop-by-hop ones (and those `Connection` names), as `[name, value, …]`. */
function endToEnd(raw: readonly string[], drop: readonly string[] = []): string[] {
  const named = new Set(drop.map((h) => h.toLowerCase()));
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() === "connection") for (const token of raw[i + 1]!.split(",")) named.add(token.trim().toLowerCase());
  }
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (!HOP_BY_HOP.has(name) && !named.has(name)) out.push(raw[i]!, raw[i + 1]!);
  }
  return out;
}

function plainText(reason: string): string {
  return `edgegym egress: ${reason}\n`;
}

/** Answers a CONNECT (or a raw socket) with a status and a short text body, then closes it. */
function refuseSocket(socket: Duplex, status: number, reason: string): void {
  const body = plainText(reason);
  if (!socket.writable) return void socket.destroy();
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? "Error"}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
  // A client that never reads its refusal does not hold the socket.
  setTimeout(() => socket.destroy(), 1_000).unref();
}

/**
 * The forward proxy: `CONNECT host:port` tunnels and absolute-URI `http://` requests, each
 * judged against the calling container's list. Bounded everywhere: header bytes, connections,
 * tunnels per container, connect and idle time.
 */
export class EgressProxy {
  private readonly server: http.Server;
  private readonly sockets = new Set<Socket | Duplex>();
  private readonly inFlight = new Map<string, number>();
  private readonly sources: Sources;
  private readonly resolve: (host: string) => Promise<string[]>;
  private readonly maxPerContainer: number;
  private readonly connectTimeoutMs: number;
  private readonly idleTimeoutMs: number;
  private port = 0;
  /** Set by the provider's owner (DockerEgress.serveLocal); null: origin-form requests are refused as before. */
  local: LocalService | null = null;

  constructor(
    engine: DockerEngine,
    readonly network: EgressNetwork,
    options: DockerEgressOptions = {},
  ) {
    this.sources = new Sources(engine, network.id, network.subnet, options.sourceTtlMs ?? 3_000);
    this.resolve = options.resolve ?? systemResolve;
    this.maxPerContainer = options.maxTunnelsPerContainer ?? 64;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
    this.idleTimeoutMs = options.idleTimeoutMs ?? 120_000;
    this.server = http.createServer(
      {
        maxHeaderSize: options.maxHeaderBytes ?? 16_384,
        headersTimeout: 10_000,
        // A request body (an upload) may take long; the idle limit bounds a stalled one.
        requestTimeout: 0,
        keepAliveTimeout: 5_000,
        connectionsCheckingInterval: 2_000,
      },
      (req, res) => void this.onRequest(req, res),
    );
    this.server.maxConnections = options.maxConnections ?? 2_048;
    this.server.setTimeout(this.idleTimeoutMs);
    this.server.on("connection", (socket: Socket) => this.track(socket));
    this.server.on("connect", (req: IncomingMessage, socket: Duplex, head: Buffer) => void this.onConnect(req, socket, head));
    this.server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) =>
      err.code === "HPE_HEADER_OVERFLOW" ? refuseSocket(socket, 431, "request headers too large") : refuseSocket(socket, 400, "malformed request"),
    );
  }

  /** The port it listens on (the one asked for, or the one picked for 0). */
  get listeningPort(): number {
    return this.port;
  }

  /**
   * Listens on the gateway address. `reusePort` (Node ≥ 22.12 on Linux): every edgegym
   * process on the host binds the same port and the kernel spreads callers over them; each
   * process identifies callers through the daemon, so any of them serves any container.
   */
  listen(port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const failed = (err: Error): void => reject(new SandboxError("sandbox_start_failed", `egress proxy cannot listen on ${this.network.gateway}:${port}: ${err.message}`, { network: this.network.name }));
      this.server.once("error", failed);
      this.server.listen({ host: this.network.gateway, port, reusePort: true }, () => {
        this.server.off("error", failed);
        const address = this.server.address();
        this.port = typeof address === "object" && address ? address.port : port;
        resolve(this.port);
      });
    });
  }

  /** Stops listening and cuts every connection and tunnel. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      for (const socket of this.sockets) socket.destroy();
      if (!this.server.listening) return resolve();
      this.server.close(() => resolve());
    });
  }

  /** Drops the address → container map: a container just started may hold a reused address. */
  forget(): void {
    this.sources.forget();
  }

  /** An origin-form request, or an absolute `http://` URI naming this proxy's own address and port (a client that sent it through its HTTP_PROXY). */
  private addressedToSelf(raw: string): boolean {
    if (raw.startsWith("/")) return true;
    try {
      const url = new URL(raw);
      return url.protocol === "http:" && url.hostname === this.network.gateway && Number(url.port || 80) === this.port;
    } catch {
      return false;
    }
  }

  private track(socket: Socket | Duplex): void {
    this.sockets.add(socket);
    socket.on("close", () => this.sockets.delete(socket));
    // Errors are ends: the pair's other side is destroyed by the close handlers.
    socket.on("error", () => undefined);
  }

  private guard(): EgressGuard {
    return { proxyAddresses: [this.network.gateway], hostAddresses: hostAddresses() };
  }

  /** Who calls, whether it may reach `host`, and where to connect; a slot is held until `release`. */
  private async admit(remote: string | undefined, host: string): Promise<Admission> {
    const address = sourceAddress(remote);
    let source: Awaited<ReturnType<Sources["identify"]>>;
    try {
      source = await this.sources.identify(address);
    } catch {
      // The daemon did not answer: refuse, and tell the (untrusted) caller nothing about the host.
      throw new Refusal(503, "cannot identify the calling sandbox now; try again");
    }
    if (!source) throw new Refusal(403, `${address} is not a sandbox of this network`);
    const entries = source.entries;
    if (!entries) throw new Refusal(403, "this sandbox has no allowlist");
    const held = this.inFlight.get(source.container) ?? 0;
    if (held >= this.maxPerContainer) throw new Refusal(429, `more than ${this.maxPerContainer} connections at once`);
    this.inFlight.set(source.container, held + 1);
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      const now = (this.inFlight.get(source.container) ?? 1) - 1;
      if (now > 0) this.inFlight.set(source.container, now);
      else this.inFlight.delete(source.container);
    };
    try {
      const what = classify(entries, host);
      let resolved: string[] = [];
      if (what.kind === "resolve") {
        try {
          resolved = await withTimeout(this.resolve(host), this.connectTimeoutMs, `resolving ${host}`);
        } catch (err) {
          throw new Refusal(502, `cannot resolve ${host} (${err instanceof Error ? err.message : String(err)})`);
        }
      }
      const verdict = judge(entries, host, resolved, this.guard());
      if (!verdict.allowed) throw new Refusal(403, verdict.reason);
      return { container: source.container, addresses: verdict.addresses, release };
    } catch (err) {
      release();
      throw err;
    }
  }

  /** A connection to the first of `addresses` that answers (at most three tried), each within the connect limit. */
  private async dial(addresses: readonly string[], port: number): Promise<Socket> {
    let last: Refusal = new Refusal(502, "no address to connect to");
    for (const address of addresses.slice(0, 3)) {
      try {
        return await new Promise<Socket>((resolve, reject) => {
          const socket = net.connect({ host: address, port });
          const timer = setTimeout(() => {
            socket.destroy();
            reject(new Refusal(504, `connecting to ${address} port ${port} took over ${this.connectTimeoutMs} ms`));
          }, this.connectTimeoutMs);
          socket.once("connect", () => {
            clearTimeout(timer);
            socket.removeAllListeners("error");
            resolve(socket);
          });
          socket.once("error", (err) => {
            clearTimeout(timer);
            reject(new Refusal(502, `cannot connect to ${address} port ${port} (${err.message})`));
          });
        });
      } catch (err) {
        last = err as Refusal;
      }
    }
    throw last;
  }

  private async onConnect(req: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    this.track(client);
    // The 'connect' socket is a net.Socket (typed Duplex): the idle limit applies to the tunnel's client side too.
    (client as Socket).setTimeout(this.idleTimeoutMs, () => client.destroy());
    const target = parseAuthority(req.url ?? "");
    if (!target) return refuseSocket(client, 400, "CONNECT needs host:port");
    let admission: Admission | undefined;
    let upstream: Socket;
    try {
      admission = await this.admit((client as Socket).remoteAddress, target.host);
      upstream = await this.dial(admission.addresses, target.port);
    } catch (err) {
      admission?.release();
      const refusal = err instanceof Refusal ? err : new Refusal(502, err instanceof Error ? err.message : String(err));
      return refuseSocket(client, refusal.status, refusal.message);
    }
    const release = admission.release;
    this.track(upstream);
    upstream.setTimeout(this.idleTimeoutMs, () => upstream.destroy());
    upstream.on("close", () => {
      release();
      client.destroy();
    });
    client.on("close", () => upstream.destroy());
    if (client.destroyed) return void upstream.destroy();
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    if (head.length) upstream.write(head);
    client.pipe(upstream);
    upstream.pipe(client);
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const refuse = (status: number, reason: string): void => {
      if (res.headersSent) return void res.destroy();
      const body = plainText(reason);
      res.writeHead(status, { "Content-Type": "text/plain; charset=utf-8", "Content-Length": Buffer.byteLength(body) }).end(body);
    };
    const raw = req.url ?? "";
    if (this.local && this.addressedToSelf(raw)) {
      if (!raw.startsWith("/")) req.url = new URL(raw).pathname + new URL(raw).search;
      return this.local(req, res);
    }
    let url: URL;
    try {
      if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) throw new Error("relative");
      url = new URL(raw);
    } catch {
      return refuse(400, "this is a proxy: send absolute-URI requests (GET http://host/path) or CONNECT host:port");
    }
    if (url.protocol !== "http:") return refuse(400, `${url.protocol}// is not proxied as a plain request; HTTPS goes through CONNECT`);
    const host = normalizeHost(url.hostname);
    const port = url.port ? Number(url.port) : 80;
    // A client that leaves while its destination is judged or dialled must not keep the slot.
    let gone = false;
    res.once("close", () => (gone = true));
    let admission: Admission | undefined;
    let socket: Socket;
    try {
      admission = await this.admit(req.socket.remoteAddress, host);
      socket = await this.dial(admission.addresses, port);
    } catch (err) {
      admission?.release();
      const refusal = err instanceof Refusal ? err : new Refusal(502, err instanceof Error ? err.message : String(err));
      return refuse(refusal.status, refusal.message);
    }
    const release = admission.release;
    this.track(socket);
    if (gone) {
      release();
      return void socket.destroy();
    }
    socket.setTimeout(this.idleTimeoutMs, () => socket.destroy());
    // The absolute URI decides the destination, so the Host header is made from it (RFC 9112 §3.2.2).
    const headers = [...endToEnd(req.rawHeaders, ["host"]), "Host", url.host, "Connection", "close"];
    // createConnection without an agent: the request goes over the socket dialled to the checked address, never a pooled or re-resolved one.
    const upstream = http.request({ createConnection: () => socket, method: req.method, path: `${url.pathname}${url.search}`, headers, setHost: false });
    res.on("close", () => {
      release();
      upstream.destroy();
      socket.destroy();
    });
    upstream.on("error", (err) => refuse(502, `${host}: ${err.message}`));
    upstream.on("response", (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, endToEnd(answer.rawHeaders));
      answer.pipe(res);
    });
    req.pipe(upstream);
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/**
 * The provider's side of egress: the network, the host rules and the proxy, brought up on the
 * first allowlist sandbox (or `start()`), brought up again if the network was recreated with
 * another gateway, and stopped by `close()`. One per provider; calls are serialised.
 */
export class DockerEgress {
  private proxy: EgressProxy | null = null;
  private local: LocalService | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  readonly networkName: string;
  private readonly port: number;
  private readonly firewall: "iptables" | "external";

  constructor(
    private readonly engine: DockerEngine,
    private readonly options: DockerEgressOptions = {},
  ) {
    this.networkName = options.network ?? "edgegym-egress";
    this.port = options.port ?? 3128;
    this.firewall = options.firewall ?? "iptables";
  }

  /** The network and the listening proxy; idempotent. A server that restarts calls it so existing allowlist sandboxes get their proxy back before any new one is made. */
  start(): Promise<EgressProxy> {
    return this.serialised(async () => {
      const network = await ensureEgressNetwork(this.engine, this.networkName).catch((err: unknown) => {
        throw err instanceof SandboxError ? err : new SandboxError("sandbox_start_failed", `egress network ${this.networkName}: ${err instanceof Error ? err.message : String(err)}`);
      });
      let proxy = this.proxy;
      if (!proxy || proxy.network.id !== network.id || proxy.network.gateway !== network.gateway) {
        await this.proxy?.close();
        this.proxy = null;
        proxy = new EgressProxy(this.engine, network, this.options);
        proxy.local = this.local;
        await proxy.listen(this.port);
      }
      if (this.firewall === "iptables") {
        // Checked at every start, not only the first: a firewall reload that flushed the rules
        // would otherwise leave the host open to the bridge until the server restarts.
        try {
          await guardBridge(network.bridge, network.gateway, proxy.listeningPort);
        } catch (err) {
          await proxy.close();
          this.proxy = null;
          throw new SandboxError(
            "sandbox_start_failed",
            `allowlist sandboxes need host firewall rules on ${network.bridge} and they could not be installed (${err instanceof Error ? err.message : String(err)}); run the server with CAP_NET_ADMIN, or install the rules of docs/sandboxes.md and set the egress firewall to "external"`,
            { network: network.name },
          );
        }
      }
      this.proxy = proxy;
      return proxy;
    });
  }

  /** What a container with this allowlist is created with. An unreadable list refuses the sandbox. */
  async route(hosts: readonly string[]): Promise<EgressRoute> {
    const parsed = parseAllowlist(hosts);
    if ("error" in parsed) throw new SandboxError("sandbox_start_failed", parsed.error, { network: "allowlist" });
    const proxy = await this.start();
    return {
      network: proxy.network.name,
      labels: { [ALLOW_LABEL]: JSON.stringify(hosts.map((h) => h.trim().toLowerCase().replace(/\.+$/, ""))) },
      env: proxyEnv(proxy.network.gateway, proxy.listeningPort),
    };
  }

  /** After a container started: its address may be one a removed container had. */
  forget(): void {
    this.proxy?.forget();
  }

  /** Serves requests addressed to the proxy itself with `service` (now and after every restart of the proxy). */
  serveLocal(service: LocalService | null): void {
    this.local = service;
    if (this.proxy) this.proxy.local = service;
  }

  /** Where a container on the egress network reaches the local service: the gateway and the proxy's port (the proxy is started if it is not). */
  async localAddress(): Promise<{ host: string; port: number }> {
    const proxy = await this.start();
    return { host: proxy.network.gateway, port: proxy.listeningPort };
  }

  close(): Promise<void> {
    return this.serialised(async () => {
      await this.proxy?.close();
      this.proxy = null;
    });
  }

  private serialised<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => undefined);
    return run;
  }
}
