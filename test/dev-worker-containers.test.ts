import { execFile, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * scripts/dev-worker/: the local Docker work-arounds for Cloudflare Containers under
 * `wrangler dev` (dev only). What can be checked fast and for real: the docker wrapper's
 * argument rewriting (against a recording stand-in for docker), the egress stand-in as a host
 * process and as its image, the Docker socket proxy against a scripted daemon and the real one,
 * and containers-dev.mjs's decisions, run mode and clean-up. No execFileSync/spawnSync here:
 * servers run in this process.
 */
const run = promisify(execFile);
const DIR = join(import.meta.dirname, "..", "scripts", "dev-worker");
const BASE_IMAGE = "edgegym/base:bookworm";
const TAG = `edgegym-test-dw${process.pid}`;

interface SocketProxy {
  socketPath: string;
  url: string;
  close(): Promise<void>;
}
interface ProxyModule {
  startDockerSocketProxy(opts: { socketPath: string; upstream?: string; addressesOf?: (ifname: string) => Promise<string[]>; onRewrite?: (target: string) => void }): Promise<SocketProxy>;
  fillBridgeGateway(network: unknown, addressesOf?: (ifname: string) => Promise<string[]>): Promise<boolean>;
}
interface DevModule {
  stripJsonc(text: string): string;
  readWranglerConfig(path: string, envName?: string): { name?: string; classNames: string[] };
  resolveWorker(opts: { cwd?: string; own?: string[]; command?: string[] }): { name: string; classNames: string[]; configPath: string | null };
  pinnedEgressImage(cwd?: string): string;
  hasIpv4Gateway(network: unknown): boolean;
  prepareContainersDev(opts: { cwd?: string; env?: NodeJS.ProcessEnv; log?: (line: string) => void }): Promise<{ env: Record<string, string>; notes: string[]; close(): Promise<void> }>;
}
// Plain .mjs scripts (no type declarations): imported by URL, typed by the interfaces above.
const proxyModule = (await import(pathToFileURL(join(DIR, "docker-socket-proxy.mjs")).href)) as ProxyModule;
const devModule = (await import(pathToFileURL(join(DIR, "containers-dev.mjs")).href)) as DevModule;

/** Whether a Docker daemon answers and has the base image; EDGEGYM_REQUIRE_DOCKER=1 makes "no" an error. */
async function dockerReady(): Promise<boolean> {
  let reason: string | null = null;
  try {
    await run("docker", ["image", "inspect", BASE_IMAGE], { timeout: 20_000 });
  } catch {
    reason = `no Docker daemon answers, or it lacks ${BASE_IMAGE} (run: bash scripts/sandbox-base-image.sh)`;
  }
  if (reason && process.env.EDGEGYM_REQUIRE_DOCKER === "1") throw new Error(`EDGEGYM_REQUIRE_DOCKER=1 but ${reason}`);
  if (reason) console.warn(`dev-worker Docker tests skipped: ${reason}`);
  return reason === null;
}
const docker = await dockerReady();

const dirs: string[] = [];
function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `edgegym-dw-${prefix}-`));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  while (dirs.length) rmSync(dirs.pop() as string, { recursive: true, force: true });
});

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}: ${String(last)}`);
}

/** One HTTP request, over TCP or a unix socket; the body as text. */
function request(
  opts: http.RequestOptions & { body?: string | Buffer },
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(opts, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

/** Runs a command with stdin; resolves to its exit code and output. */
function runWithInput(file: string, args: string[], input: string, env: NodeJS.ProcessEnv = process.env, timeoutMs = 120_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(input);
  });
}

/** Opens a CONNECT tunnel through the stand-in; resolves to the status and (on 200) the socket. */
function connectTunnel(port: number, dst: string): Promise<{ status: number; socket: net.Socket; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, method: "CONNECT", path: dst, headers: { "X-Dst-Addr": dst } });
    req.on("connect", (res, socket) => resolve({ status: res.statusCode ?? 0, socket, body: "" }));
    req.on("response", (res) => {
      let body = "";
      res.on("data", (d: Buffer) => (body += d.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, socket: res.socket, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** Sends `data` through a socket, half-closes, and collects everything that comes back. */
function roundTrip(socket: net.Socket, data: Buffer | string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("end", () => resolve(Buffer.concat(chunks)));
    socket.on("error", reject);
    socket.end(data);
  });
}

describe("docker-wrapper.sh (WRANGLER_DOCKER_BIN)", () => {
  const wrapper = join(DIR, "docker-wrapper.sh");
  let dir = "";
  let recorder = "";
  beforeAll(() => {
    dir = tempDir("wrapper");
    recorder = join(dir, "real-docker");
    // Records argv (one argument a line), DOCKER_BUILDKIT and stdin of a `-f -` build; `image inspect present` succeeds.
    writeFileSync(
      recorder,
      `#!/bin/sh
log="${dir}/calls"
{ echo "BUILDKIT=\${DOCKER_BUILDKIT:-unset}"; for a in "$@"; do echo "[$a]"; done; echo "--"; } >> "$log"
case "$*" in
  "image inspect present"|"-H unix:///x image inspect present") exit 0 ;;
  "image inspect "*) exit 1 ;;
  *" -f - "*) cat > "${dir}/stdin" ;;
  "fail"*) exit 7 ;;
esac
exit 0
`,
    );
    chmodSync(recorder, 0o755);
  });

  const calls = async (args: string[], env: NodeJS.ProcessEnv = { ...process.env, EDGEGYM_REAL_DOCKER: recorder }, input = "") => {
    rmSync(join(dir, "calls"), { force: true });
    const result = await runWithInput(wrapper, args, input, env, 20_000);
    let log = "";
    try {
      log = readFileSync(join(dir, "calls"), "utf8");
    } catch {
      // no call
    }
    const recorded = log
      .split("--\n")
      .filter(Boolean)
      .map((call) => {
        const lines = call.trim().split("\n");
        return { buildkit: (lines[0] as string).slice("BUILDKIT=".length), args: lines.slice(1).map((l) => l.slice(1, -1)) };
      });
    return { ...result, recorded };
  };

  it("drops --load and --provenance=false from wrangler's build, keeps --platform, runs the legacy builder, passes stdin", async () => {
    const r = await calls(
      ["build", "--load", "-t", "cloudflare-dev/box:abc123", "--platform", "linux/amd64", "--provenance=false", "--build-arg", "A=b c", "-f", "-", "/ctx dir"],
      undefined,
      "FROM scratch\n",
    );
    expect(r.code).toBe(0);
    expect(r.recorded).toEqual([
      { buildkit: "0", args: ["build", "-t", "cloudflare-dev/box:abc123", "--platform", "linux/amd64", "--build-arg", "A=b c", "-f", "-", "/ctx dir"] },
    ]);
    expect(readFileSync(join(dir, "stdin"), "utf8")).toBe("FROM scratch\n");
    const image = await calls(["-H", "unix:///x", "image", "build", "--load", "."]);
    expect(image.recorded).toEqual([{ buildkit: "0", args: ["-H", "unix:///x", "image", "build", "."] }]);
  });

  it("makes `pull` a no-op for an image present locally, else pulls", async () => {
    const present = await calls(["pull", "present", "--platform", "linux/amd64"]);
    expect(present.code).toBe(0);
    expect(present.recorded.map((c) => c.args)).toEqual([["image", "inspect", "present"]]);
    const flagFirst = await calls(["pull", "--platform", "linux/amd64", "present"]);
    expect(flagFirst.recorded.map((c) => c.args)).toEqual([["image", "inspect", "present"]]);
    const absent = await calls(["pull", "cloudflare/proxy-everything:3cb1195@sha256:0ef6"]);
    expect(absent.recorded.map((c) => c.args)).toEqual([
      ["image", "inspect", "cloudflare/proxy-everything:3cb1195@sha256:0ef6"],
      ["pull", "cloudflare/proxy-everything:3cb1195@sha256:0ef6"],
    ]);
  });

  it("passes everything else through unchanged, exit code included", async () => {
    const ps = await calls(["ps", "-a", "--filter", "name=workerd-x-", "--format", "{{.ID}}\t{{.Names}}"]);
    expect(ps.recorded).toEqual([{ buildkit: "unset", args: ["ps", "-a", "--filter", "name=workerd-x-", "--format", "{{.ID}}\t{{.Names}}"] }]);
    expect((await calls(["fail", "now"])).code).toBe(7);
    expect((await calls([])).recorded).toEqual([{ buildkit: "unset", args: [] }]);
  });

  it("finds the real docker on PATH, never itself", async () => {
    const onPath = join(dir, "path-a");
    const real = join(dir, "path-b");
    mkdirSync(onPath);
    mkdirSync(real);
    symlinkSync(wrapper, join(onPath, "docker"));
    symlinkSync(recorder, join(real, "docker"));
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${onPath}:${real}:${process.env.PATH}` };
    delete env.EDGEGYM_REAL_DOCKER;
    const r = await calls(["version"], env);
    expect(r.recorded).toEqual([{ buildkit: "unset", args: ["version"] }]);
    // Only the wrapper (and what it runs on) on PATH: no docker to find.
    const tools = join(dir, "tools");
    mkdirSync(tools);
    for (const tool of ["bash", "readlink"]) symlinkSync((await run("bash", ["-c", `command -v ${tool}`])).stdout.trim(), join(tools, tool));
    const alone = await calls(["version"], { ...env, PATH: `${onPath}:${tools}` });
    expect(alone.code).toBe(127);
    expect(alone.stderr).toMatch(/no docker found/);
  });
});

describe("egress-standin.py as a host process", () => {
  const started: ChildProcess[] = [];
  afterAll(() => {
    for (const p of started) p.kill("SIGKILL");
  });

  async function startStandin(extraEnv: Record<string, string> = {}): Promise<{ port: number; pem: string }> {
    const dir = tempDir("standin");
    const pem = "-----BEGIN CERTIFICATE-----\nTEST ONLY\n-----END CERTIFICATE-----\n";
    writeFileSync(join(dir, "ca.pem"), pem);
    const port = await freePort();
    // The arguments workerd passes to its sidecar, plus --ca-file (the image bakes one in).
    const args = ["--http-egress-port", "41000", "--http-ingress-address", `127.0.0.1:${port}`, "--docker-gateway-cidr", "172.17.0.0/16", "--dns-enabled", "--tls-intercept", "--disable-ipv6", "--ca-file", join(dir, "ca.pem")];
    const child = spawn("python3", [join(DIR, "egress-standin.py"), ...args], { stdio: "ignore", env: { ...process.env, ...extraEnv } });
    started.push(child);
    await waitFor("the stand-in to listen", async () => ((await request({ host: "127.0.0.1", port, path: "/ca" })).status === 200 ? true : undefined));
    return { port, pem };
  }

  it("answers GET /ca, PUT /egress and 404 for the rest", async () => {
    const { port, pem } = await startStandin();
    const ca = await request({ host: "127.0.0.1", port, path: "/ca" });
    expect([ca.status, ca.body]).toEqual([200, pem]);
    const egress = await request({ host: "127.0.0.1", port, method: "PUT", path: "/egress", headers: { "content-type": "application/json" }, body: JSON.stringify({ port: 41000, dns: { allowHostnames: [] }, internet: { enabled: false } }) });
    expect(egress.status).toBe(200);
    expect((await request({ host: "127.0.0.1", port, path: "/" })).status).toBe(404);
    expect((await request({ host: "127.0.0.1", port, method: "POST", path: "/egress", body: "x" })).status).toBe(404);
  });

  it("tunnels CONNECT with X-Dst-Addr to a local server, both ways, and refuses an address that does not answer", async () => {
    const { port } = await startStandin();
    const web = http.createServer((req, res) => res.end(`hello from ${req.url}`));
    await new Promise<void>((resolve) => web.listen(0, "127.0.0.1", resolve));
    const echo = net.createServer({ allowHalfOpen: true }, (s) => s.pipe(s));
    await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
    try {
      const webPort = (web.address() as net.AddressInfo).port;
      const tunnel = await connectTunnel(port, `127.0.0.1:${webPort}`);
      expect(tunnel.status).toBe(200);
      const answer = (await roundTrip(tunnel.socket, "GET /x HTTP/1.1\r\nHost: c\r\nConnection: close\r\n\r\n")).toString();
      expect(answer).toMatch(/^HTTP\/1\.1 200[\s\S]*hello from \/x$/);

      const data = randomBytes(1 << 20);
      const echoTunnel = await connectTunnel(port, `127.0.0.1:${(echo.address() as net.AddressInfo).port}`);
      expect(echoTunnel.status).toBe(200);
      expect((await roundTrip(echoTunnel.socket, data)).equals(data)).toBe(true);

      const closed = await connectTunnel(port, `127.0.0.1:${await freePort()}`);
      expect(closed.status).toBe(502);
      closed.socket.destroy();
    } finally {
      web.close();
      echo.close();
    }
  });

  it("holds at most EDGEGYM_EGRESS_MAX_CONNECTIONS connections at once", async () => {
    const { port } = await startStandin({ EDGEGYM_EGRESS_MAX_CONNECTIONS: "2" });
    const echo = net.createServer((s) => s.pipe(s));
    await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
    try {
      const dst = `127.0.0.1:${(echo.address() as net.AddressInfo).port}`;
      const a = await connectTunnel(port, dst);
      const b = await connectTunnel(port, dst);
      expect([a.status, b.status]).toEqual([200, 200]);
      const third = request({ host: "127.0.0.1", port, path: "/ca" });
      const early = await Promise.race([third.then(() => "answered"), new Promise((r) => setTimeout(() => r("waiting"), 700))]);
      expect(early).toBe("waiting");
      a.socket.destroy();
      expect((await third).status).toBe(200);
      b.socket.destroy();
    } finally {
      echo.close();
    }
  });
});

describe("docker-socket-proxy.mjs against a scripted daemon", () => {
  const network = (name: string, extra: Record<string, unknown> = {}) => ({
    Name: name,
    Id: "0123456789abcdef0123456789abcdef",
    Driver: "bridge",
    IPAM: { Driver: "default", Options: null, Config: [{ Subnet: "10.99.0.0/16" }] },
    Options: name === "bridge" ? { "com.docker.network.bridge.name": "docker0" } : {},
    ...extra,
  });

  it("fills in a missing bridge Gateway: the interface's address in the subnet, else the subnet's first host", async () => {
    const docker0 = async (ifname: string) => (ifname === "docker0" ? ["192.168.5.5", "10.99.3.1"] : []);
    const bridge = network("bridge");
    expect(await proxyModule.fillBridgeGateway(bridge, docker0)).toBe(true);
    expect(bridge.IPAM.Config).toEqual([{ Subnet: "10.99.0.0/16", Gateway: "10.99.3.1" }]);
    const user = network("user-net");
    expect(await proxyModule.fillBridgeGateway(user, docker0)).toBe(true);
    expect(user.IPAM.Config).toEqual([{ Subnet: "10.99.0.0/16", Gateway: "10.99.0.1" }]);
    const kept = network("bridge", { IPAM: { Config: [{ Subnet: "10.99.0.0/16", Gateway: "10.99.0.254" }, { Subnet: "fd00::/64" }] } });
    expect(await proxyModule.fillBridgeGateway(kept, docker0)).toBe(false);
    expect(kept.IPAM.Config).toEqual([{ Subnet: "10.99.0.0/16", Gateway: "10.99.0.254" }, { Subnet: "fd00::/64" }]);
    expect(await proxyModule.fillBridgeGateway(network("h", { Driver: "host" }), docker0)).toBe(false);
  });

  let dir = "";
  let daemon: http.Server;
  let proxy: SocketProxy;
  const seen: { method: string; url: string; te?: string; body: string }[] = [];
  const rewrites: string[] = [];
  beforeAll(async () => {
    dir = tempDir("fake-daemon");
    daemon = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const body = Buffer.concat(chunks).toString();
        seen.push({ method: req.method ?? "", url: req.url ?? "", body, ...(req.headers["transfer-encoding"] ? { te: req.headers["transfer-encoding"] } : {}) });
        res.setHeader("Api-Version", "1.41");
        if (req.url === "/v1.41/networks/bridge") return res.end(JSON.stringify(network("bridge")) + "\n");
        if (req.url === "/networks") return res.end(JSON.stringify([network("bridge"), network("host", { Driver: "host" })]) + "\n");
        if (req.url === "/v1.41/networks/ok") return res.end('{"Name":"ok",  "Driver":"bridge","IPAM":{"Config":[{"Subnet":"10.1.0.0/16","Gateway":"10.1.0.1"}]}}\n');
        if (req.url === "/stream") {
          res.write("a");
          setTimeout(() => res.end("b"), 50);
          return;
        }
        res.end(`echo ${req.method} ${req.url} ${body}`);
      });
    });
    // Docker's hijack: 101, then a raw stream both ways (here: upper-cased echo).
    daemon.on("upgrade", (req, socket: net.Socket) => {
      seen.push({ method: req.method ?? "", url: req.url ?? "", body: "" });
      socket.write("HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n");
      socket.on("data", (d: Buffer) => socket.write(d.toString().toUpperCase()));
      socket.on("end", () => socket.end());
    });
    await new Promise<void>((resolve) => daemon.listen(join(dir, "daemon.sock"), resolve));
    proxy = await proxyModule.startDockerSocketProxy({
      socketPath: join(dir, "proxy.sock"),
      upstream: join(dir, "daemon.sock"),
      addressesOf: async (ifname) => (ifname === "docker0" ? ["10.99.0.1"] : []),
      onRewrite: (t) => rewrites.push(t),
    });
  });
  afterAll(async () => {
    await proxy?.close();
    daemon?.close();
  });

  it("answers network inspections with the Gateway filled in, the list included, and leaves complete ones byte for byte", async () => {
    const one = await request({ socketPath: proxy.socketPath, path: "/v1.41/networks/bridge" });
    expect(one.status).toBe(200);
    expect(one.headers["api-version"]).toBe("1.41");
    expect(JSON.parse(one.body).IPAM.Config).toEqual([{ Subnet: "10.99.0.0/16", Gateway: "10.99.0.1" }]);
    const list = JSON.parse((await request({ socketPath: proxy.socketPath, path: "/networks" })).body);
    expect(list.map((n: { IPAM: { Config: unknown } }) => n.IPAM.Config)).toEqual([[{ Subnet: "10.99.0.0/16", Gateway: "10.99.0.1" }], [{ Subnet: "10.99.0.0/16" }]]);
    const ok = await request({ socketPath: proxy.socketPath, path: "/v1.41/networks/ok" });
    expect(ok.body).toBe('{"Name":"ok",  "Driver":"bridge","IPAM":{"Config":[{"Subnet":"10.1.0.0/16","Gateway":"10.1.0.1"}]}}\n');
    expect(rewrites).toEqual(["/v1.41/networks/bridge", "/networks"]);
  });

  it("passes requests with chunked and sized bodies, streamed answers and keep-alive connections through", async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const sockets = new Set<net.Socket>();
      agent.on("free", (s: net.Socket) => sockets.add(s));
      const big = randomBytes(300_000).toString("base64");
      const chunked = await new Promise<string>((resolve, reject) => {
        const req = http.request({ socketPath: proxy.socketPath, method: "POST", path: "/build?t=x", agent }, (res) => {
          let body = "";
          res.on("data", (d: Buffer) => (body += d.toString()));
          res.on("end", () => resolve(body));
        });
        req.on("error", reject);
        req.write(big.slice(0, 1000));
        setTimeout(() => req.end(big.slice(1000)), 20);
      });
      expect(chunked).toBe(`echo POST /build?t=x ${big}`);
      expect(seen.at(-1)?.te).toBe("chunked");
      // Same connection: the next request, then an intercepted one, then a plain one again.
      expect((await request({ socketPath: proxy.socketPath, method: "POST", path: "/sized", body: "12345", agent })).body).toBe("echo POST /sized 12345");
      expect(JSON.parse((await request({ socketPath: proxy.socketPath, path: "/v1.41/networks/bridge", agent })).body).IPAM.Config[0].Gateway).toBe("10.99.0.1");
      expect((await request({ socketPath: proxy.socketPath, path: "/after", agent })).body).toBe("echo GET /after ");
      expect((await request({ socketPath: proxy.socketPath, path: "/stream", agent })).body).toBe("ab");
      expect(sockets.size).toBe(1);
    } finally {
      agent.destroy();
    }
  });

  it("passes hijacked (upgraded) connections through raw, both ways", async () => {
    const socket = await new Promise<net.Socket>((resolve, reject) => {
      const req = http.request({
        socketPath: proxy.socketPath,
        method: "POST",
        path: "/v1.41/exec/abc/start",
        headers: { Connection: "Upgrade", Upgrade: "tcp", "Content-Type": "application/json" },
      });
      req.on("upgrade", (res, s: net.Socket, head: Buffer) => {
        expect(res.statusCode).toBe(101);
        if (head.length) s.unshift(head);
        resolve(s);
      });
      req.on("error", reject);
      req.end('{"Detach":false,"Tty":false}');
    });
    expect((await roundTrip(socket, "raw bytes after the upgrade\r\n\r\nGET /networks/bridge HTTP/1.1\r\n\r\n")).toString()).toBe(
      "RAW BYTES AFTER THE UPGRADE\r\n\r\nGET /NETWORKS/BRIDGE HTTP/1.1\r\n\r\n",
    );
  });
});

describe.skipIf(!docker)("the pieces against the real Docker daemon", () => {
  let dir = "";
  let proxy: SocketProxy;
  const containers: string[] = [];
  const images: string[] = [];
  beforeAll(async () => {
    dir = tempDir("real-proxy");
    proxy = await proxyModule.startDockerSocketProxy({ socketPath: join(dir, "docker.sock") });
  });
  afterAll(async () => {
    await proxy?.close();
    if (containers.length) await run("docker", ["rm", "-f", ...containers], { timeout: 60_000 }).catch(() => undefined);
    for (const image of images) await run("docker", ["rmi", image], { timeout: 60_000 }).catch(() => undefined);
  }, 120_000);

  it("socket proxy: GET /networks/bridge has an IPv4 Gateway, /containers/json passes through", async () => {
    const bridge = await request({ socketPath: proxy.socketPath, path: "/v1.41/networks/bridge" });
    expect(bridge.status).toBe(200);
    expect(devModule.hasIpv4Gateway(JSON.parse(bridge.body))).toBe(true);
    const list = await request({ socketPath: proxy.socketPath, path: "/v1.41/containers/json?all=1" });
    expect(list.status).toBe(200);
    expect(Array.isArray(JSON.parse(list.body))).toBe(true);
  });

  it("socket proxy: the docker CLI runs a container with attached output and stdin, and builds, through it", async () => {
    const host = ["-H", proxy.url];
    const name = `${TAG}-echo`;
    containers.push(name, `${TAG}-cat`);
    const { stdout } = await run("docker", [...host, "run", "--rm", "--name", name, BASE_IMAGE, "echo", "hi"], { timeout: 60_000 });
    expect(stdout).toBe("hi\n");
    const cat = await runWithInput("docker", [...host, "run", "--rm", "-i", "--name", `${TAG}-cat`, BASE_IMAGE, "cat"], "through stdin\n");
    expect([cat.code, cat.stdout]).toEqual([0, "through stdin\n"]);
    const image = `edgegym-test/socket-proxy-build:${TAG}`;
    images.push(image);
    const built = await runWithInput("docker", [...host, "build", "-t", image, "-"], `FROM ${BASE_IMAGE}\nRUN echo built > /built\n`, { ...process.env, DOCKER_BUILDKIT: "0" });
    expect(built.code, built.stderr).toBe(0);
    const { stdout: inside } = await run("docker", [...host, "run", "--rm", image, "cat", "/built"], { timeout: 60_000 });
    expect(inside).toBe("built\n");
  }, 120_000);

  it("egress stand-in image: answers /ca with its PEM and tunnels inside its own network namespace", async () => {
    const { stdout } = await run("bash", [join(DIR, "egress-standin-image.sh")], { timeout: 600_000 });
    const tag = stdout.trim().split("\n").pop() as string;
    expect(tag).toMatch(/^edgegym\/egress-standin:[0-9a-f]{12}$/);
    const name = `${TAG}-egress`;
    containers.push(name);
    await run("docker", ["run", "-d", "--name", name, "-p", "127.0.0.1::39001", tag, "--http-egress-port", "41000", "--http-ingress-address", "0.0.0.0:39001", "--docker-gateway-cidr", "172.17.0.0/16", "--dns-enabled", "--tls-intercept", "--disable-ipv6"], { timeout: 60_000 });
    const port = Number((await run("docker", ["port", name, "39001/tcp"])).stdout.trim().split("\n")[0]?.split(":").pop());
    const ca = await waitFor("the stand-in's /ca", async () => {
      const r = await request({ host: "127.0.0.1", port, path: "/ca" });
      return r.status === 200 ? r.body : undefined;
    });
    expect(ca).toMatch(/^-----BEGIN CERTIFICATE-----\n[\s\S]+-----END CERTIFICATE-----\n$/);
    const tunnel = await connectTunnel(port, "127.0.0.1:39001");
    expect(tunnel.status).toBe(200);
    const viaTunnel = (await roundTrip(tunnel.socket, "GET /ca HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")).toString();
    expect(viaTunnel.endsWith(ca)).toBe(true);
  }, 600_000);
});

describe("containers-dev.mjs", () => {
  it("reads the worker's name and container classes from JSONC and TOML configs, --name and --env", () => {
    expect(JSON.parse(devModule.stripJsonc('{\n // c\n "a": "x // not a comment", /* b */ "u": "http://h/*x*/",\n "l": [1, 2,],\n}'))).toEqual({ a: "x // not a comment", u: "http://h/*x*/", l: [1, 2] });
    const dir = tempDir("config");
    writeFileSync(
      join(dir, "wrangler.jsonc"),
      `{
  // a comment
  "name": "scratch",
  "containers": [{ "class_name": "Box", "image": "./Dockerfile", "max_instances": 8, },],
  "durable_objects": { "bindings": [{ "name": "B", "class_name": "Box" }, { "name": "O", "class_name": "Other" }] },
  "env": { "staging": { "name": "scratch-stage", "containers": [{ "class_name": "StageBox", "image": "./Dockerfile" }] }, "qa": {} },
}`,
    );
    expect(devModule.resolveWorker({ cwd: join(dir) })).toEqual({ name: "scratch", classNames: ["Box"], configPath: join(dir, "wrangler.jsonc") });
    expect(devModule.resolveWorker({ cwd: dir, command: ["npx", "wrangler", "dev", "--env", "staging"] })).toMatchObject({ name: "scratch-stage", classNames: ["Box", "StageBox"] });
    expect(devModule.resolveWorker({ cwd: dir, command: ["wrangler", "dev", "-e=qa"] }).name).toBe("scratch-qa");
    expect(devModule.resolveWorker({ cwd: dir, own: ["--name", "mine"], command: ["wrangler", "dev", "--name", "theirs"] }).name).toBe("mine");
    expect(devModule.resolveWorker({ cwd: dir, command: ["node", "node_modules/wrangler/bin/wrangler.js", "dev", "--name", "theirs"] }).name).toBe("theirs");
    // Flags of a command that is not wrangler are not wrangler's.
    expect(devModule.resolveWorker({ cwd: dir, command: ["sh", "-c", "exit 4", "-e", "x"] }).name).toBe("scratch");
    writeFileSync(join(dir, "other.toml"), 'name = "tomlish"\nmain = "x.ts"\n\n[[durable_objects.bindings]]\nclass_name = "NotAContainer"\n\n[[containers]]\nclass_name = "TBox"\nimage = "./Dockerfile"\n');
    expect(devModule.resolveWorker({ cwd: dir, command: ["wrangler", "dev", "-c", "other.toml"] })).toMatchObject({ name: "tomlish", classNames: ["TBox"] });
    const bare = tempDir("noconfig");
    expect(devModule.readWranglerConfig(join(dir, "wrangler.jsonc"), "staging").name).toBe("scratch-stage");
    expect(devModule.resolveWorker({ cwd: "/" }).name).toBe("edgegym");
    expect(devModule.resolveWorker({ cwd: bare, own: ["--name", "x"] }).classNames).toEqual([]);
  });

  it("knows the sidecar image the installed wrangler pins, and applies nothing with EDGEGYM_CONTAINERS_DEV=off", async () => {
    const pinned = devModule.pinnedEgressImage();
    expect(pinned).toMatch(/^cloudflare\/proxy-everything:[0-9a-f]+@sha256:[0-9a-f]{64}$/);
    expect(readFileSync(join(import.meta.dirname, "..", "node_modules", "wrangler", "wrangler-dist", "cli.js"), "utf8")).toContain(`"${pinned}"`);
    const lines: string[] = [];
    const off = await devModule.prepareContainersDev({ env: { ...process.env, EDGEGYM_CONTAINERS_DEV: "off" }, log: (l) => lines.push(l) });
    expect(off.env).toEqual({});
    expect(lines).toEqual(["EDGEGYM_CONTAINERS_DEV=off: no local Docker work-arounds"]);
  });

  it.skipIf(!docker)("sets up what is needed (and what is forced), with one line per work-around", async () => {
    const lines: string[] = [];
    const setup = await devModule.prepareContainersDev({
      env: { ...process.env, EDGEGYM_CONTAINERS_DEV_FORCE: "socket-proxy,docker-bin", WRANGLER_DOCKER_BIN: "", MINIFLARE_CONTAINER_EGRESS_IMAGE: "", WRANGLER_DOCKER_HOST: "" },
      log: (l) => lines.push(l),
    });
    try {
      expect(setup.env.WRANGLER_DOCKER_BIN).toBe(join(DIR, "docker-wrapper.sh"));
      expect(setup.env.WRANGLER_DOCKER_HOST).toMatch(/^unix:\/\/.*\/docker\.sock$/);
      const socketPath = (setup.env.WRANGLER_DOCKER_HOST as string).slice("unix://".length);
      expect((await request({ socketPath, path: "/_ping" })).body).toBe("OK");
      if (setup.env.MINIFLARE_CONTAINER_EGRESS_IMAGE) expect(setup.env.MINIFLARE_CONTAINER_EGRESS_IMAGE).toMatch(/^edgegym\/egress-standin:/);
      expect(setup.notes).toHaveLength(Object.keys(setup.env).length);
      for (const [key, value] of Object.entries(setup.env)) expect(setup.notes.some((n) => n.startsWith(`${key}=${value}: `))).toBe(true);
      await setup.close();
      expect(() => readFileSync(socketPath)).toThrow();
    } finally {
      await setup.close();
    }
  }, 600_000);

  it.skipIf(!docker)("run mode: the command gets the env and signals, its exit code comes back, this worker's containers and older image tags go", async () => {
    const dir = tempDir("run");
    const worker = `${TAG}-cdev`;
    const cls = `Edgegym${process.pid}Box`;
    const repo = `cloudflare-dev/${cls.toLowerCase()}`;
    writeFileSync(join(dir, "wrangler.jsonc"), JSON.stringify({ name: worker, containers: [{ class_name: cls, image: "./Dockerfile" }] }));
    // What wrangler dev leaves behind: sidecars of this worker, an older build's tag. Plus a neighbour's container that stays.
    const leftover = [`workerd-${worker}-${cls}-aa11-proxy`, `workerd-${worker}-${cls}-bb22`];
    const neighbour = `other-workerd-${worker}-${cls}-cc33-proxy`;
    try {
      for (const name of [...leftover, neighbour]) await run("docker", ["create", "--name", name, BASE_IMAGE, "true"], { timeout: 60_000 });
      await run("docker", ["tag", BASE_IMAGE, `${repo}:older1`]);
      // The command: records its env, makes "this run's" image tag, then waits for SIGTERM and exits 5.
      const script = [
        "const { execFileSync } = require('node:child_process');",
        `require('node:fs').writeFileSync(${JSON.stringify(join(dir, "env.json"))}, JSON.stringify(process.env));`,
        `execFileSync('docker', ['tag', '${BASE_IMAGE}', '${repo}:current']);`,
        "process.on('SIGTERM', () => { console.log('got SIGTERM'); process.exit(5); });",
        "console.log('ready'); setInterval(() => {}, 1000);",
      ].join("\n");
      const child = spawn(process.execPath, [join(DIR, "containers-dev.mjs"), "--", process.execPath, "-e", script], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr.on("data", (d: Buffer) => (out += d.toString()));
      const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
      await waitFor("the command to start", async () => (out.includes("ready") ? true : undefined), 300_000);
      child.kill("SIGTERM");
      expect(await exit).toBe(5);
      expect(out).toContain("got SIGTERM");
      const env = JSON.parse(readFileSync(join(dir, "env.json"), "utf8")) as Record<string, string>;
      for (const line of out.split("\n").filter((l) => /^containers-dev: [A-Z_]+=\S+: /.test(l))) {
        const [, key, value] = /^containers-dev: ([A-Z_]+)=(\S+): /.exec(line) as RegExpExecArray;
        expect(env[key as string]).toBe(value);
      }
      const { stdout: names } = await run("docker", ["ps", "-a", "--format", "{{.Names}}", "--filter", `name=workerd-${worker}`]);
      expect(names.split("\n").filter(Boolean)).toEqual([neighbour]);
      const { stdout: tags } = await run("docker", ["image", "ls", "--format", "{{.Repository}}:{{.Tag}}", repo]);
      expect(tags.split("\n").filter(Boolean)).toEqual([`${repo}:current`]);
      expect(out).toMatch(/removed 2 container\(s\) named workerd-.*-cdev-\*/);
    } finally {
      await run("docker", ["rm", "-f", ...leftover, neighbour], { timeout: 60_000 }).catch(() => undefined);
      for (const tag of ["older1", "current"]) await run("docker", ["rmi", `${repo}:${tag}`]).catch(() => undefined);
    }
  }, 600_000);
});
