import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DockerEngine, isEngineStatus } from "./docker-engine.node.js";
import { unguardBridge } from "./docker-egress-firewall.node.js";
import { DockerSandboxProvider } from "./docker.node.js";
import type { SandboxNetwork, SandboxRecord, SandboxSpec } from "./types.js";

/*
 * `allowlist` networks on a real daemon, no mocks: containers on the internal egress network
 * reach host HTTP servers only through the proxy and only where their own list says. Needs a
 * daemon, the image edgegym/base:bookworm and root (the provider installs iptables rules for
 * the bridge); without them the file is skipped with the reason, or fails when
 * EDGEGYM_REQUIRE_DOCKER=1. The egress network, two helper networks, containers and host
 * rules made here carry this run's name or label and are removed in afterAll.
 *
 * Targets: one HTTP server on the host listening on every address, reached at the gateway
 * addresses of two helper bridge networks (A and B): two host addresses that are neither the
 * egress gateway nor loopback, on any machine with a daemon.
 */
const BASE = "edgegym/base:bookworm";
const RUN_LABEL = "edgegym.test-run";
const runId = randomBytes(4).toString("hex");
const labels = { [RUN_LABEL]: runId };
// 15 characters: also the bridge interface's name, and so the firewall chain's.
const NETWORK = `egtest-${runId}`;

async function unavailable(): Promise<string | null> {
  const engine = new DockerEngine({ timeoutMs: 5_000 });
  try {
    await engine.json("GET", "/version");
    await engine.json("GET", `/images/${encodeURIComponent(BASE)}/json`).catch((err: unknown) => {
      throw isEngineStatus(err, 404) ? new Error(`no image ${BASE} (bash scripts/sandbox-base-image.sh builds it)`) : err;
    });
  } catch (err) {
    return `${err instanceof Error ? err.message : String(err)}`;
  } finally {
    engine.close();
  }
  if (process.getuid?.() !== 0) return "not root: the provider's iptables rules for the egress bridge need CAP_NET_ADMIN";
  return null;
}

const skipReason = await unavailable();
if (skipReason && process.env.EDGEGYM_REQUIRE_DOCKER === "1") throw new Error(skipReason);
if (skipReason) console.warn(`docker egress tests skipped: ${skipReason}`);

/** Run in the containers: one probe per call, printing "STATUS BODY" or "error: …". */
const PROBE = String.raw`
import http.client, os, socket, sys, urllib.request, urllib.error
def show(status, body): print(status, body.decode(errors="replace").strip())
cmd, args = sys.argv[1], sys.argv[2:]
try:
    if cmd == "env-get":  # the way curl, pip and apt go: through the proxy the environment names
        try:
            with urllib.request.urlopen(args[0], timeout=10) as r: show(r.status, r.read())
        except urllib.error.HTTPError as e: show(e.code, e.read())
    elif cmd == "proxy-get":  # an absolute-URI request to an explicit proxy
        c = http.client.HTTPConnection(args[0], int(args[1]), timeout=5); c.request("GET", args[2]); r = c.getresponse(); show(r.status, r.read())
    elif cmd == "tunnel":  # CONNECT, then plain HTTP inside the tunnel
        c = http.client.HTTPConnection(args[0], int(args[1]), timeout=5); c.set_tunnel(args[2], int(args[3]))
        try:
            c.request("GET", "/tunnel"); r = c.getresponse(); show(r.status, r.read())
        except OSError as e: print("error:", e)
    elif cmd == "direct":
        s = socket.create_connection((args[0], int(args[1])), timeout=3); print("connected")
    elif cmd == "raw":  # bytes as given (escapes decoded, "HUGE" becomes a 20 KiB header), the answer's first line
        s = socket.create_connection((args[0], int(args[1])), timeout=5)
        s.sendall(args[2].encode().decode("unicode_escape").replace("HUGE", "X-Big: " + "a" * 20000).encode())
        print(s.recv(200).split(b"\r\n")[0].decode())
    elif cmd == "idle":  # a tunnel left silent: how long until the proxy closes it
        import time
        s = socket.create_connection((args[0], int(args[1])), timeout=30)
        s.sendall(("CONNECT %s:%s HTTP/1.1\r\nHost: x\r\n\r\n" % (args[2], args[3])).encode())
        s.recv(200); started = time.monotonic(); rest = s.recv(200)
        print("closed" if rest == b"" else "data", round(time.monotonic() - started))
    elif cmd == "hold":  # n tunnels held open, then one more
        held = []
        for i in range(int(args[4]) + 1):
            s = socket.create_connection((args[0], int(args[1])), timeout=5)
            s.sendall(("CONNECT %s:%s HTTP/1.1\r\nHost: x\r\n\r\n" % (args[2], args[3])).encode())
            print(s.recv(200).split(b"\r\n")[0].decode()); held.append(s)
except OSError as e:
    print("error:", e)
`;

describe.skipIf(skipReason !== null)(`allowlist networks on a real daemon${skipReason ? ` (skipped: ${skipReason})` : ""}`, () => {
  const docker = new DockerSandboxProvider({ egressNetwork: NETWORK, egress: { maxTunnelsPerContainer: 4, idleTimeoutMs: 2_000 } });
  const engine = docker.engine;
  const server = http.createServer((req, res) => res.end(`hello from ${req.socket.localAddress} ${req.url}`));
  const helperNetworks: string[] = [];
  let port = 0;
  let targetA = "";
  let targetB = "";
  let gateway = "";
  const boxes: Record<"a" | "b" | "empty" | "none" | "public", SandboxRecord | undefined> = { a: undefined, b: undefined, empty: undefined, none: undefined, public: undefined };

  const spec = (network: SandboxNetwork): SandboxSpec => ({ image: BASE, limits: { memoryMb: 256, pids: 64, cpus: 1 }, network, labels });
  const probe = async (box: SandboxRecord | undefined, ...args: string[]): Promise<string> => {
    const run = await docker.exec(box!.id, ["python3", "-c", PROBE, ...args], { timeoutMs: 30_000, maxOutputBytes: 65_536 });
    return run.output.trim();
  };
  const helperGateway = async (name: string): Promise<string> => {
    await engine.json("POST", "/networks/create", { json: { Name: name, Driver: "bridge", CheckDuplicate: true, Labels: labels } });
    helperNetworks.push(name);
    const found = await engine.json<{ IPAM: { Config: { Gateway: string }[] } }>("GET", `/networks/${name}`);
    return found.IPAM.Config[0]!.Gateway;
  };

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, "0.0.0.0", resolve));
    port = (server.address() as AddressInfo).port;
    targetA = await helperGateway(`egtest-a-${runId}`);
    targetB = await helperGateway(`egtest-b-${runId}`);
    // B's list names B by address and "localhost" by name (which must not open the host's loopback).
    [boxes.a, boxes.b, boxes.empty, boxes.none, boxes.public] = await Promise.all([
      docker.create(spec({ mode: "allowlist", hosts: [`${targetA}/32`] })),
      docker.create(spec({ mode: "allowlist", hosts: [targetB, "localhost"] })),
      docker.create(spec({ mode: "allowlist", hosts: [] })),
      docker.create(spec({ mode: "none" })),
      docker.create(spec({ mode: "public" })),
    ]);
    gateway = (await engine.json<{ IPAM: { Config: { Gateway: string }[] } }>("GET", `/networks/${NETWORK}`)).IPAM.Config[0]!.Gateway;
  }, 120_000);

  afterAll(async () => {
    await docker.close();
    for (const container of await docker.list(labels)) await docker.destroy(container.id);
    const remove = (name: string) => engine.json("DELETE", `/networks/${encodeURIComponent(name)}`).catch((err: unknown) => (isEngineStatus(err, 404) ? undefined : Promise.reject(err)));
    for (const name of [NETWORK, ...helperNetworks]) await remove(name);
    await unguardBridge(NETWORK);
    await new Promise((resolve) => server.close(resolve));
    engine.close();
  }, 120_000);

  it("creates the egress network internal, without traffic between containers, labelled, and points the container at the proxy", async () => {
    const found = await engine.json<{ Internal: boolean; Options: Record<string, string>; Labels: Record<string, string> }>("GET", `/networks/${NETWORK}`);
    expect(found).toMatchObject({ Internal: true, Options: { "com.docker.network.bridge.enable_icc": "false", "com.docker.network.bridge.name": NETWORK }, Labels: { "edgegym.role": "egress" } });
    const env = await docker.exec(boxes.a!.id, ["sh", "-c", "echo $HTTP_PROXY $https_proxy $NO_PROXY"], { timeoutMs: 10_000, maxOutputBytes: 4_096 });
    expect(env.output.trim()).toBe(`http://${gateway}:3128 http://${gateway}:3128 localhost,127.0.0.1`);
    expect((await docker.inspect(boxes.a!.id))?.labels["edgegym.allow"]).toBe(JSON.stringify([`${targetA}/32`]));
  });

  it("lets a container reach its listed host through the proxy, plain HTTP and CONNECT, and nothing else", async () => {
    expect(await probe(boxes.a, "env-get", `http://${targetA}:${port}/plain`)).toBe(`200 hello from ${targetA} /plain`);
    expect(await probe(boxes.a, "tunnel", gateway, "3128", targetA, String(port))).toBe(`200 hello from ${targetA} /tunnel`);
    expect(await probe(boxes.a, "env-get", `http://${targetB}:${port}/`)).toBe(`403 edgegym egress: ${targetB} is not in this sandbox's allowlist`);
    expect(await probe(boxes.a, "tunnel", gateway, "3128", targetB, String(port))).toMatch(/^error: Tunnel connection failed: 403/);
  });

  it("judges each container by its own list", async () => {
    expect(await probe(boxes.b, "env-get", `http://${targetB}:${port}/b`)).toBe(`200 hello from ${targetB} /b`);
    expect(await probe(boxes.b, "env-get", `http://${targetA}:${port}/`)).toBe(`403 edgegym egress: ${targetA} is not in this sandbox's allowlist`);
    expect(await probe(boxes.empty, "env-get", `http://${targetA}:${port}/`)).toMatch(/^403 /);
  });

  it("refuses a listed name that resolves to loopback (DNS rebinding onto the host)", async () => {
    expect(await probe(boxes.b, "proxy-get", gateway, "3128", `http://localhost:${port}/`)).toMatch(/^403 edgegym egress: localhost resolves to a loopback address/);
    expect(await probe(boxes.b, "tunnel", gateway, "3128", "127.0.0.1", String(port))).toMatch(/^error: Tunnel connection failed: 403/);
  });

  it("reaches nothing without the proxy: not the target, not the host's other ports, not the outside", async () => {
    for (const [host, p] of [
      [targetA, port],
      [gateway, port],
      ["192.0.2.1", 80],
    ] as const) {
      expect(await probe(boxes.a, "direct", host, String(p)), `${host}:${p}`).toMatch(/^error: /);
    }
  });

  it("refuses callers that are not sandboxes of the network, and a `none` container has no way to it", async () => {
    expect(await probe(boxes.none, "direct", gateway, "3128")).toMatch(/^error: /);
    // A `public` container reaches the host's addresses, the proxy's too, but is no sandbox of the egress network.
    expect(await probe(boxes.public, "proxy-get", gateway, "3128", `http://${targetA}:${port}/`)).toMatch(/^403 edgegym egress: \S+ is not a sandbox of this network/);
  });

  it("refuses a container on the network without a list", async () => {
    const created = await engine.json<{ Id: string }>("POST", "/containers/create", {
      json: { Image: BASE, Entrypoint: ["sleep"], Cmd: ["infinity"], Labels: labels, HostConfig: { NetworkMode: NETWORK, Init: true } },
    });
    await engine.json("POST", `/containers/${created.Id}/start`);
    const record = { provider: "docker", id: created.Id, image: BASE, imageDigest: "" };
    expect(await probe(record, "proxy-get", gateway, "3128", `http://${targetA}:${port}/`)).toBe("403 edgegym egress: this sandbox has no allowlist");
  });

  it("answers requests that are not proxy requests, and oversized headers, with an error, never a connection", async () => {
    const raw = (bytes: string) => probe(boxes.a, "raw", gateway, "3128", bytes);
    expect(await raw("GET / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")).toBe("HTTP/1.1 400 Bad Request");
    expect(await raw(`GET https://${targetA}:${port}/ HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n`)).toBe("HTTP/1.1 400 Bad Request");
    expect(await raw(`CONNECT ${targetA} HTTP/1.1\\r\\n\\r\\n`)).toBe("HTTP/1.1 400 Bad Request");
    expect(await raw(`GET http://${targetA}:${port}/ HTTP/1.1\\r\\nHUGE\\r\\n\\r\\n`)).toMatch(/^HTTP\/1.1 4(00|31) /);
  });

  it("bounds the tunnels one container holds at once", async () => {
    const lines = (await probe(boxes.a, "hold", gateway, "3128", targetA, String(port), "4")).split("\n");
    expect(lines).toEqual([...new Array<string>(4).fill("HTTP/1.1 200 Connection Established"), "HTTP/1.1 429 Too Many Requests"]);
    // Closed tunnels give their slots back.
    expect(await probe(boxes.a, "tunnel", gateway, "3128", targetA, String(port))).toBe(`200 hello from ${targetA} /tunnel`);
  });

  it("closes a tunnel idle past the limit", async () => {
    expect(await probe(boxes.a, "idle", gateway, "3128", targetA, String(port))).toMatch(/^closed [23]$/);
  });

  it("cuts tunnels when the provider closes, and starts again on the next allowlist sandbox", async () => {
    await docker.close();
    expect(await probe(boxes.a, "env-get", `http://${targetA}:${port}/`)).toMatch(/^error: /);
    const again = await docker.create(spec({ mode: "allowlist", hosts: [targetA] }));
    expect(await probe(again, "env-get", `http://${targetA}:${port}/again`)).toBe(`200 hello from ${targetA} /again`);
    expect(await probe(boxes.a, "env-get", `http://${targetA}:${port}/`)).toBe(`200 hello from ${targetA} /`);
  });
});
