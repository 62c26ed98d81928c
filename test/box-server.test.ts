import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExecReply } from "../src/server/worker/durable/box-server-client.js";

/*
 * edgegym's box server (box-server/, Go) against real containers, no mocks: the image is
 * built by scripts/box-server-image.sh (Go inside Docker, none on the host), a test image
 * puts the binary as ENTRYPOINT on edgegym/base:bookworm, and every call goes over HTTP to
 * the container's bridge IP, as the Worker's calls come in over the container's port.
 *
 * Needs a Docker daemon; without one the file is skipped with the reason, or fails when
 * EDGEGYM_REQUIRE_DOCKER=1 (CI). Every container started here carries the label
 * edgegym.test=box-server and is removed in afterAll.
 */

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("..", import.meta.url));
const LABEL = "edgegym.test=box-server";
const TOKEN = randomBytes(24).toString("hex"); // 48 characters
const started: string[] = [];

async function dockerUnavailable(): Promise<string | null> {
  try {
    await run("docker", ["version", "--format", "{{.Server.Version}}"], { timeout: 20_000 });
    return null;
  } catch (err) {
    return `no Docker daemon answers (${err instanceof Error ? err.message.split("\n")[0] : String(err)})`;
  }
}

const skipReason = await dockerUnavailable();
if (skipReason && process.env.EDGEGYM_REQUIRE_DOCKER === "1") throw new Error(`EDGEGYM_REQUIRE_DOCKER=1 but ${skipReason}`);
if (skipReason) console.warn(`box-server tests skipped: ${skipReason}`);

/** `docker build -` with the Dockerfile on stdin and no context (COPY --from an image only). */
function buildFromStdin(tag: string, dockerfile: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("docker", ["build", "--force-rm", "-q", "-t", tag, "--label", LABEL, "-"], { env: { ...process.env, DOCKER_BUILDKIT: "0" }, stdio: ["pipe", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`docker build ${tag} exited ${code}: ${stderr.slice(-2000)}`))));
    child.stdin.end(dockerfile);
  });
}

interface Box {
  id: string;
  url: string;
}

interface ExecBody {
  argv: string[];
  timeout_ms?: number;
  max_output_bytes?: number;
  user?: string;
  workdir?: string;
  env?: Record<string, string>;
  stdin_b64?: string;
}


type Exec = ExecReply & { output: string; wallMs: number };

const auth = { authorization: `Bearer ${TOKEN}` };

function call(box: Box, path: string, init: RequestInit = {}, headers: Record<string, string> = auth): Promise<Response> {
  return fetch(`${box.url}${path}`, { ...init, headers: { ...headers, ...(init.headers as Record<string, string> | undefined) }, signal: AbortSignal.timeout(60_000) });
}

async function exec(box: Box, body: ExecBody): Promise<Exec> {
  const t0 = performance.now();
  const res = await call(box, "/exec", { method: "POST", body: JSON.stringify({ timeout_ms: 10_000, max_output_bytes: 1 << 20, ...body }) });
  const text = await res.text();
  const wallMs = performance.now() - t0;
  if (res.status !== 200) throw new Error(`exec ${JSON.stringify(body.argv)}: ${res.status} ${text}`);
  const reply = JSON.parse(text) as ExecReply;
  return { ...reply, output: Buffer.from(reply.output_b64, "base64").toString("utf8"), wallMs };
}

const sh = (script: string, extra: Omit<ExecBody, "argv"> = {}): ExecBody => ({ argv: ["sh", "-c", script], ...extra });

/** A write's answer: 200 `{"ok":true}` (not 204: workerd's client mishandled its connection after a 204). */
async function expectWritten(res: Response): Promise<void> {
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({ ok: true });
}

async function errorOf(res: Response): Promise<{ status: number; code: string }> {
  const body = (await res.json()) as { error: { code: string; message: string } };
  expect(typeof body.error.message).toBe("string");
  return { status: res.status, code: body.error.code };
}

describe.skipIf(skipReason !== null)(`box server in a container${skipReason ? ` (skipped: ${skipReason})` : ""}`, () => {
  let image: string;
  let box: Box;

  async function startBox(extra: string[] = []): Promise<Box> {
    const { stdout } = await run("docker", ["run", "-d", "--label", LABEL, "-e", `EDGEGYM_BOX_TOKEN=${TOKEN}`, "-e", "EDGEGYM_BOX_PORT=8080", "-e", "IMAGE_VAR=from-image", ...extra, image], { timeout: 60_000 });
    const id = stdout.trim();
    started.push(id);
    const { stdout: ip } = await run("docker", ["inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}", id], { timeout: 20_000 });
    const candidate = { id, url: `http://${ip.trim()}:8080` };
    for (let i = 0; i < 100; i++) {
      try {
        if ((await call(candidate, "/health")).ok) return candidate;
      } catch {
        // Not listening yet.
      }
      await sleep(100);
    }
    const { stdout: logs, stderr } = await run("docker", ["logs", id]);
    throw new Error(`box server did not answer in 10 s: ${logs}${stderr}`);
  }

  beforeAll(async () => {
    const t0 = performance.now();
    const { stdout, stderr } = await run("bash", [`${ROOT}/scripts/box-server-image.sh`], { cwd: ROOT, timeout: 15 * 60_000, maxBuffer: 16 << 20 });
    const serverTag = stdout.trim().split("\n").pop() ?? "";
    expect(serverTag).toMatch(/^edgegym\/box-server:[0-9a-f]{16}$/);
    console.log(`box-server image ${serverTag} ready in ${Math.round(performance.now() - t0)} ms${stderr ? `\n${stderr.trim()}` : ""}`);
    image = `edgegym-test/box-server:${serverTag.split(":")[1]}`;
    await buildFromStdin(image, [`FROM edgegym/base:bookworm`, `COPY --from=${serverTag} /edgegym-box-server /usr/local/bin/edgegym-box-server`, `ENTRYPOINT ["/usr/local/bin/edgegym-box-server"]`, ""].join("\n"));
    box = await startBox();
  }, 20 * 60_000);

  afterAll(async () => {
    if (started.length) await run("docker", ["rm", "-f", ...started], { timeout: 60_000 }).catch(() => undefined);
  });

  it("refuses to start without a token of at least 32 characters", async () => {
    for (const env of [[], ["-e", "EDGEGYM_BOX_TOKEN=short"]]) {
      const err = (await run("docker", ["run", "--rm", "--label", LABEL, ...env, image], { timeout: 60_000 }).then(
        () => null,
        (e: unknown) => e,
      )) as { code?: number; stderr?: string } | null;
      expect(err?.code).toBe(2);
      expect(err?.stderr).toContain("EDGEGYM_BOX_TOKEN must be set to at least 32 characters");
    }
  });

  it("answers 401 without the token or with a wrong one, for every path", async () => {
    const wrong: Record<string, string>[] = [{}, { authorization: `Bearer ${"x".repeat(TOKEN.length)}` }, { authorization: `Bearer ${TOKEN}x` }, { authorization: TOKEN }];
    for (const headers of wrong) {
      for (const [path, method] of [["/health", "GET"], ["/exec", "POST"], ["/file?path=/etc/passwd", "GET"], ["/nowhere", "GET"]] as const) {
        const res = await call(box, path, { method, ...(method === "POST" ? { body: JSON.stringify(sh("touch /tmp/pwned")) } : {}) }, headers);
        expect(await errorOf(res)).toEqual({ status: 401, code: "unauthorized" });
      }
    }
    expect((await call(box, "/file?path=/tmp/pwned")).status).toBe(404);
    const health = await call(box, "/health");
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ ok: true, version: "1" });
    expect(await errorOf(await call(box, "/nowhere"))).toEqual({ status: 404, code: "not_found" });
  });

  it("runs argv without a shell, with exit codes as docker exec gives them", async () => {
    const echo = await exec(box, { argv: ["echo", "hello", "$HOME", "a b"] });
    expect(echo).toMatchObject({ exit_code: 0, output: "hello $HOME a b\n", output_bytes: 16, truncated: false, timed_out: false, oom_killed: false });
    expect((await exec(box, sh("exit 3"))).exit_code).toBe(3);
    expect((await exec(box, sh("kill -TERM $$"))).exit_code).toBe(143);
    const missing = await exec(box, { argv: ["no-such-program"] });
    expect(missing.exit_code).toBe(127);
    expect(missing.output).toContain("executable file not found in $PATH");
    expect((await exec(box, { argv: ["/no/such/file"] })).exit_code).toBe(127);
    expect((await exec(box, { argv: ["/etc/passwd"] })).exit_code).toBe(126);
    const noDir = await exec(box, { argv: ["pwd"], workdir: "/no/such/dir" });
    expect(noDir.exit_code).toBe(126);
    expect(noDir.output).toContain("/no/such/dir");
    expect((await exec(box, { argv: ["pwd"], workdir: "/tmp" })).output).toBe("/tmp\n");
    expect((await exec(box, { argv: ["pwd"] })).output).toBe("/\n");
  });

  it("interleaves stdout and stderr in arrival order and counts what it drops", async () => {
    const mixed = await exec(box, sh("for i in 1 2 3 4 5; do echo out$i; echo err$i >&2; done"));
    expect(mixed.output).toBe([1, 2, 3, 4, 5].map((i) => `out${i}\nerr${i}\n`).join(""));
    const big = await exec(box, { argv: ["head", "-c", "100000", "/dev/zero"], max_output_bytes: 1000 });
    expect(big).toMatchObject({ exit_code: 0, output_bytes: 100_000, truncated: true });
    expect(Buffer.from(big.output_b64, "base64")).toHaveLength(1000);
    const none = await exec(box, { argv: ["echo", "hi"], max_output_bytes: 0 });
    expect(none).toMatchObject({ output: "", output_bytes: 3, truncated: true });
  });

  it("gives the child the image's env and the request's, never the token or the port", async () => {
    const env = await exec(box, { argv: ["env"], env: { FOO: "bar baz", IMAGE_VAR: "overridden" } });
    expect(env.output).toContain("FOO=bar baz\n");
    expect(env.output).toContain("IMAGE_VAR=overridden\n");
    expect(env.output).toContain("PATH=/usr/local/sbin:");
    expect(env.output).not.toContain(TOKEN);
    expect(env.output).not.toContain("EDGEGYM_BOX"); // _TOKEN, _PORT, and _TOKEN_FD of the hand-over
    expect((await exec(box, { argv: ["printenv", "IMAGE_VAR"] })).output).toBe("from-image\n");
    // Not even PID 1's own environment block (what the kernel copied at its exec) holds it.
    const environ = await exec(box, { argv: ["cat", "/proc/1/environ"] });
    expect(environ.exit_code).toBe(0);
    expect(environ.output).toContain("IMAGE_VAR=from-image");
    expect(environ.output).not.toContain(TOKEN);
    // argv[0] is looked up on the child's PATH.
    expect((await exec(box, { argv: ["sh", "-c", "true"], env: { PATH: "/nowhere" } })).exit_code).toBe(127);
    const { stdout, stderr } = await run("docker", ["logs", box.id]);
    expect(stdout + stderr).not.toContain(TOKEN);
    expect(stderr).toMatch(/^POST \/exec 200 \d+ms$/m);
  });

  it("runs as another user with that user's uid, groups and HOME", async () => {
    expect((await exec(box, { argv: ["id", "-u"], user: "nobody" })).output).toBe("65534\n");
    expect((await exec(box, sh('echo "$HOME $USER"', { user: "nobody" }))).output).toBe("/nonexistent nobody\n");
    expect((await exec(box, sh('echo "$HOME"', { user: "nobody", env: { HOME: "/custom" } }))).output).toBe("/custom\n");
    expect((await exec(box, { argv: ["id", "-u"], user: "65534" })).output).toBe("65534\n");
    expect((await exec(box, sh('echo "$(id -u) $(id -g) $HOME"', { user: "12345" }))).output).toBe("12345 0 /\n");
    expect((await exec(box, sh("echo boxtest:x:4321:nobody >> /etc/group"))).exit_code).toBe(0);
    expect((await exec(box, { argv: ["id", "-G"], user: "nobody" })).output).toBe("65534 4321\n");
    expect((await exec(box, { argv: ["id", "-g"], user: "nobody:boxtest" })).output).toBe("4321\n");
    expect((await exec(box, { argv: ["id", "-g"], user: "65534:4321" })).output).toBe("4321\n");
    const res = await call(box, "/exec", { method: "POST", body: JSON.stringify({ argv: ["id"], timeout_ms: 1000, max_output_bytes: 100, user: "nosuchuser" }) });
    expect(await errorOf(res)).toEqual({ status: 400, code: "bad_user" });
  });

  it("passes stdin, and an empty closed one without stdin_b64", async () => {
    const data = Buffer.concat([Buffer.from("line one\n"), randomBytes(300)]);
    const cat = await exec(box, { argv: ["cat"], stdin_b64: data.toString("base64") });
    expect(Buffer.from(cat.output_b64, "base64").equals(data)).toBe(true);
    expect((await exec(box, { argv: ["wc", "-c"] })).output).toBe("0\n");
    // A command that never reads a large stdin must not hold the reply.
    const unread = await exec(box, { argv: ["true"], stdin_b64: randomBytes(4 << 20).toString("base64") });
    expect(unread.exit_code).toBe(0);
    expect(unread.wallMs).toBeLessThan(5000);
  });

  it("kills the whole session on timeout, backgrounded grandchildren and other groups too", async () => {
    // sleep 4241: a background child; sleep 4242: a job in its own process group (job control).
    const script = "sleep 4241 & bash -c 'set -m; sleep 4242 & wait' & sleep 4243";
    const pending = exec(box, sh(script, { timeout_ms: 2500 }));
    await sleep(1000);
    const during = await exec(box, { argv: ["ps", "-eo", "pid=,pgid=,sid=,args="] });
    const rows = during.output
      .split("\n")
      .map((l) => l.trim().split(/\s+/))
      .filter((f) => f[3] === "sleep");
    const byArg = new Map(rows.map((f) => [f[4], { pgid: f[1], sid: f[2] }]));
    expect([...byArg.keys()].sort()).toEqual(["4241", "4242", "4243"]);
    expect(byArg.get("4242")?.pgid).not.toBe(byArg.get("4242")?.sid);
    expect(byArg.get("4242")?.sid).toBe(byArg.get("4243")?.sid);
    const reply = await pending;
    expect(reply).toMatchObject({ exit_code: null, timed_out: true });
    expect(reply.duration_ms).toBeGreaterThanOrEqual(2500);
    expect(reply.wallMs).toBeLessThan(5000);
    const after = await exec(box, { argv: ["ps", "-eo", "stat=,args="] });
    expect(after.output).not.toMatch(/sleep 424[123]/);
  });

  it("answers promptly when a daemonised grandchild keeps the output pipe", async () => {
    const reply = await exec(box, sh("sleep 4250 & echo $!; echo started"));
    expect(reply.exit_code).toBe(0);
    expect(reply.timed_out).toBe(false);
    expect(reply.wallMs).toBeLessThan(2000);
    const [pid, word] = reply.output.split("\n");
    expect(word).toBe("started");
    // The grandchild lives on, as after docker exec; once killed, the server (PID 1) reaps it.
    expect((await exec(box, { argv: ["ps", "-o", "args=", "-p", pid!] })).output).toBe("sleep 4250\n");
    expect((await exec(box, { argv: ["kill", pid!] })).exit_code).toBe(0);
    await sleep(300);
    expect((await exec(box, { argv: ["ps", "-eo", "stat=,args="] })).output).not.toContain("sleep");
  });

  it("runs concurrent execs side by side", async () => {
    const t0 = performance.now();
    const replies = await Promise.all(Array.from({ length: 8 }, (_, i) => exec(box, sh('sleep 1; echo "n=$N"', { env: { N: String(i) } }))));
    const wall = performance.now() - t0;
    replies.forEach((r, i) => expect(r).toMatchObject({ exit_code: 0, output: `n=${i}\n` }));
    expect(wall).toBeLessThan(4000);
  });

  it("refuses malformed exec requests", async () => {
    const bad = async (body: unknown) => errorOf(await call(box, "/exec", { method: "POST", body: typeof body === "string" ? body : JSON.stringify(body) }));
    const base = { argv: ["true"], timeout_ms: 1000, max_output_bytes: 10 };
    for (const body of [
      { ...base, argv: [] },
      { ...base, argv: Array.from({ length: 4097 }, () => "x") },
      { ...base, timeout_ms: 0 },
      { ...base, timeout_ms: 7_200_001 },
      { ...base, max_output_bytes: (64 << 20) + 1 },
      { ...base, workdir: "relative" },
      { ...base, unknown: 1 },
      { ...base, stdin_b64: "not base64!" },
      "{not json",
      `{"argv":["true"],"timeout_ms":1000,"max_output_bytes":10,"env":${"[".repeat(100)}${"]".repeat(100)}}`,
    ]) {
      expect(await bad(body)).toEqual({ status: 400, code: "bad_request" });
    }
    expect((await exec(box, { ...base, argv: Array.from({ length: 4096 }, (_, i) => (i === 0 ? "true" : "x")) })).exit_code).toBe(0);
    expect(await errorOf(await call(box, "/exec"))).toEqual({ status: 405, code: "method_not_allowed" });
  });

  it("reads and writes single files", async () => {
    const data = randomBytes(100_000);
    await expectWritten(await call(box, "/file?path=/tmp/made/by/put.bin&mode=0600&user=nobody", { method: "PUT", body: data }));
    const got = await call(box, "/file?path=/tmp/made/by/put.bin&max_bytes=100000");
    expect(got.status).toBe(200);
    expect(got.headers.get("content-type")).toBe("application/octet-stream");
    expect(Buffer.from(await got.arrayBuffer()).equals(data)).toBe(true);
    const stat = await exec(box, { argv: ["stat", "-c", "%a %U %G %n", "/tmp/made/by/put.bin", "/tmp/made/by", "/tmp/made"] });
    expect(stat.output).toBe("600 nobody nogroup /tmp/made/by/put.bin\n755 root root /tmp/made/by\n755 root root /tmp/made\n");
    // Overwritten in place by a rename: no temporary file left beside it.
    await expectWritten(await call(box, "/file?path=/tmp/made/by/put.bin", { method: "PUT", body: "short" }));
    expect(await (await call(box, "/file?path=/tmp/made/by/put.bin")).text()).toBe("short");
    expect((await exec(box, { argv: ["ls", "-A", "/tmp/made/by"] })).output).toBe("put.bin\n");
    expect((await exec(box, { argv: ["stat", "-c", "%a %U", "/tmp/made/by/put.bin"] })).output).toBe("644 root\n");

    expect(await errorOf(await call(box, "/file?path=/tmp/made/by/put.bin&max_bytes=4"))).toEqual({ status: 413, code: "file_too_large" });
    expect(await errorOf(await call(box, "/file?path=/no/such/file&max_bytes=10"))).toEqual({ status: 404, code: "file_not_found" });
    expect(await errorOf(await call(box, "/file?path=/tmp&max_bytes=10"))).toEqual({ status: 400, code: "not_a_file" });
    expect(await errorOf(await call(box, "/file?path=tmp/x&max_bytes=10"))).toEqual({ status: 400, code: "bad_path" });
    expect(await errorOf(await call(box, "/file?path=tmp/x", { method: "PUT", body: "x" }))).toEqual({ status: 400, code: "bad_path" });
    expect(await errorOf(await call(box, "/file?path=/tmp/x&mode=999", { method: "PUT", body: "x" }))).toEqual({ status: 400, code: "bad_request" });
    expect(await errorOf(await call(box, "/file?path=/tmp/x&user=nosuchuser", { method: "PUT", body: "x" }))).toEqual({ status: 400, code: "bad_user" });
    // Bodies are bounded at 64 MiB, and a refused one leaves no temporary file behind.
    expect(await errorOf(await call(box, "/file?path=/tmp/huge/big.bin", { method: "PUT", body: new Uint8Array((64 << 20) + 1) }))).toEqual({ status: 413, code: "body_too_large" });
    expect((await exec(box, { argv: ["ls", "-A", "/tmp/huge"] })).output).toBe("");
    // A FIFO is refused, not waited on.
    expect((await exec(box, { argv: ["mkfifo", "/tmp/fifo"] })).exit_code).toBe(0);
    expect(await errorOf(await call(box, "/file?path=/tmp/fifo&max_bytes=10"))).toEqual({ status: 400, code: "not_a_file" });
  });

  it("writes a tree of files, and nothing when one path leaves the directory", async () => {
    const b64 = (s: string) => Buffer.from(s).toString("base64");
    const ok = await call(box, "/files?dir=/tmp/tree", { method: "POST", body: JSON.stringify({ files: [{ path: "sub/dir/run.sh", mode: 0o755, data_b64: b64("#!/bin/sh\necho ran\n") }, { path: "top.txt", mode: 0o640, data_b64: b64("top") }, { path: "./plain.txt", data_b64: b64("") }] }) });
    await expectWritten(ok);
    expect((await exec(box, { argv: ["/tmp/tree/sub/dir/run.sh"] })).output).toBe("ran\n");
    expect((await exec(box, { argv: ["stat", "-c", "%a %s %n", "/tmp/tree/top.txt", "/tmp/tree/plain.txt", "/tmp/tree/sub/dir"] })).output).toBe("640 3 /tmp/tree/top.txt\n644 0 /tmp/tree/plain.txt\n755 4096 /tmp/tree/sub/dir\n");

    expect((await exec(box, { argv: ["ln", "-s", "/etc", "/tmp/tree/link"] })).exit_code).toBe(0);
    for (const evil of ["../escaped.txt", "sub/../../escaped.txt", "/tmp/escaped.txt", "link/escaped.txt", "", "."]) {
      const res = await call(box, "/files?dir=/tmp/tree", { method: "POST", body: JSON.stringify({ files: [{ path: "good.txt", mode: 0o644, data_b64: b64("good") }, { path: evil, mode: 0o644, data_b64: b64("evil") }] }) });
      expect(await errorOf(res)).toEqual({ status: 400, code: "bad_path" });
    }
    const leftovers = await exec(box, { argv: ["ls", "/tmp/tree/good.txt", "/tmp/escaped.txt", "/etc/escaped.txt", "/escaped.txt"] });
    expect(leftovers.output).not.toMatch(/^\/.*\.txt$/m);
    expect(leftovers.exit_code).toBe(2);
    expect(await errorOf(await call(box, "/files?dir=relative", { method: "POST", body: JSON.stringify({ files: [] }) }))).toEqual({ status: 400, code: "bad_path" });
    const tooMany = { files: Array.from({ length: 10_001 }, (_, i) => ({ path: `f${i}`, mode: 0o644, data_b64: "" })) };
    expect(await errorOf(await call(box, "/files?dir=/tmp/many", { method: "POST", body: JSON.stringify(tooMany) }))).toEqual({ status: 400, code: "bad_request" });
  });

  it("detects an OOM kill under a 64 MB memory limit", async () => {
    const small = await startBox(["--memory", "64m", "--memory-swap", "64m"]);
    const oom = await exec(small, { argv: ["python3", "-c", "b = b'x' * (512 << 20); print(len(b))"], timeout_ms: 60_000 });
    expect(oom).toMatchObject({ exit_code: 137, oom_killed: true, timed_out: false });
    // The server itself survived, and the next command is not blamed for the earlier kill.
    const next = await exec(small, { argv: ["python3", "-c", "print(len(b'x' * (8 << 20)))"] });
    expect(next).toMatchObject({ exit_code: 0, output: "8388608\n", oom_killed: false });
  }, 120_000);

  it("stops cleanly on SIGTERM, killing a running command", async () => {
    const idle = await startBox();
    let t0 = performance.now();
    await run("docker", ["stop", "-t", "10", idle.id], { timeout: 30_000 });
    expect(performance.now() - t0).toBeLessThan(3000);
    expect((await run("docker", ["inspect", "-f", "{{.State.ExitCode}}", idle.id])).stdout.trim()).toBe("0");

    const busy = await startBox();
    const pending = exec(busy, { argv: ["sleep", "600"], timeout_ms: 600_000 });
    await sleep(300);
    t0 = performance.now();
    await run("docker", ["stop", "-t", "10", busy.id], { timeout: 30_000 });
    expect(performance.now() - t0).toBeLessThan(8000);
    expect(await pending).toMatchObject({ exit_code: 137, timed_out: false });
    expect((await run("docker", ["inspect", "-f", "{{.State.ExitCode}}", busy.id])).stdout.trim()).toBe("0");
  }, 60_000);

  it("answers an exec of `true` quickly (median round trip over 50, from the host)", async () => {
    const times: number[] = [];
    for (let i = 0; i < 50; i++) times.push((await exec(box, { argv: ["true"] })).wallMs);
    times.sort((a, b) => a - b);
    const median = times[25]!;
    console.log(`box-server exec round trip for \`true\`: median ${median.toFixed(1)} ms, min ${times[0]!.toFixed(1)} ms, max ${times[49]!.toFixed(1)} ms`);
    expect(median).toBeLessThan(250);
  });
});
