import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DockerEngine, isEngineStatus } from "./docker-engine.node.js";
import { DockerSandboxProvider } from "./docker.node.js";
import { SandboxError, type ExecOptions, type SandboxRecord, type SandboxSpec } from "./types.js";

/*
 * The Docker provider against a real daemon, no mocks. Needs a daemon on DOCKER_HOST (or
 * /var/run/docker.sock) and the image edgegym/base:bookworm (scripts/sandbox-base-image.sh);
 * without them the file is skipped with the reason, or fails when EDGEGYM_REQUIRE_DOCKER=1
 * (CI). Everything made here carries this run's label and is removed in afterAll.
 */
const BASE = "edgegym/base:bookworm";
const RUN_LABEL = "edgegym.test-run";
const runId = randomBytes(6).toString("hex");
const labels = { [RUN_LABEL]: runId };

async function unavailable(): Promise<string | null> {
  const engine = new DockerEngine({ timeoutMs: 5_000 });
  try {
    await engine.json("GET", "/version");
  } catch (err) {
    return `no Docker daemon answers at ${engine.socketPath} (${err instanceof Error ? err.message : String(err)})`;
  } finally {
    engine.close();
  }
  const probe = new DockerSandboxProvider({ requestTimeoutMs: 5_000 });
  try {
    return (await probe.imageExists(BASE)) ? null : `no image ${BASE} (bash scripts/sandbox-base-image.sh builds it)`;
  } finally {
    probe.engine.close();
  }
}

const skipReason = await unavailable();
if (skipReason && process.env.EDGEGYM_REQUIRE_DOCKER === "1") throw new Error(skipReason);
if (skipReason) console.warn(`docker provider tests skipped: ${skipReason}`);

const quick: ExecOptions = { timeoutMs: 10_000, maxOutputBytes: 65_536 };

function spec(overrides: Partial<SandboxSpec> = {}): SandboxSpec {
  return { image: BASE, limits: { memoryMb: 256, pids: 64, cpus: 1 }, network: { mode: "none" }, labels, ...overrides };
}

async function rejection(promise: Promise<unknown>): Promise<SandboxError> {
  const err = await promise.then(
    () => new Error("expected a rejection"),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SandboxError);
  return err as SandboxError;
}

describe.skipIf(skipReason !== null)(`DockerSandboxProvider on a real daemon${skipReason ? ` (skipped: ${skipReason})` : ""}`, () => {
  const docker = new DockerSandboxProvider();
  let box: SandboxRecord;
  const run = (argv: string[], options: Partial<ExecOptions> = {}) => docker.exec(box.id, argv, { ...quick, ...options });
  const sh = (script: string, options: Partial<ExecOptions> = {}) => run(["sh", "-c", script], options);

  beforeAll(async () => {
    box = await docker.create(spec({ workdir: "/work/app", env: { GREETING: "hello" } }));
  });

  afterAll(async () => {
    // Sweep by this run's label: containers first (they hold images), then images.
    for (const container of await docker.list(labels)) await docker.destroy(container.id);
    const images = await docker.engine.json<{ Id: string }[]>("GET", "/images/json", { query: { filters: JSON.stringify({ label: [`${RUN_LABEL}=${runId}`] }) } });
    for (const image of images) await docker.engine.json("DELETE", `/images/${image.Id}`, { query: { force: true } }).catch((err: unknown) => (isEngineStatus(err, 404) ? undefined : Promise.reject(err)));
    docker.engine.close();
  });

  it("creates a container from the image's content address and runs a command: exit code, env, workdir", async () => {
    expect(box).toMatchObject({ provider: "docker", image: BASE, imageDigest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });
    const result = await sh('echo "$GREETING $EXTRA from $(pwd)"; exit 3', { env: { EXTRA: "there" } });
    expect(result).toMatchObject({ exitCode: 3, output: "hello there from /work/app\n", timedOut: false, oomKilled: false, truncated: false });
    expect((await run(["id", "-un"], { user: "nobody", workdir: "/tmp" })).output).toBe("nobody\n");
    // argv is argv: no shell, no word splitting, builtins are not commands.
    expect((await run(["printf", "%s|", "a b", "$HOME"])).output).toBe("a b|$HOME|");
    expect((await run(["no-such-command"])).exitCode).toBe(127);
  });

  it("interleaves stdout and stderr in the order they were written", async () => {
    const result = await sh("echo one; sleep 0.2; echo two >&2; sleep 0.2; echo three");
    expect(result.output).toBe("one\ntwo\nthree\n");
    expect(result.outputBytes).toBe(14);
  });

  it("keeps the first maxOutputBytes, counts the rest, and reads the command to its end", async () => {
    const result = await sh("head -c 300000 /dev/zero | tr '\\0' a; echo done >&2", { maxOutputBytes: 1_000 });
    expect(result).toMatchObject({ exitCode: 0, truncated: true, outputBytes: 300_005 });
    expect(result.output).toBe("a".repeat(1_000));
  });

  it("passes stdin and closes it", async () => {
    expect((await run(["cat"], { stdin: "line 1\nline 2\n" })).output).toBe("line 1\nline 2\n");
    expect((await run(["wc", "-c"], { stdin: new Uint8Array(100_000) })).output.trim()).toBe("100000");
    // Stdin the command never reads does not hold the exec open.
    expect(await run(["head", "-c", "3"], { stdin: new Uint8Array(5_000_000).fill(120), timeoutMs: 5_000 })).toMatchObject({ exitCode: 0, output: "xxx", timedOut: false });
  });

  it("kills the whole process tree at the time limit, also children in their own process group", async () => {
    const started = Date.now();
    const ownGroup = "python3 -c 'import os, time; os.setpgid(0, 0); time.sleep(302)'";
    const result = await sh(`(sleep 300; echo never) & sh -c 'sleep 301' & ${ownGroup} & echo started; wait`, { timeoutMs: 1_500 });
    expect(result).toMatchObject({ exitCode: null, timedOut: true, output: "started\n" });
    expect(Date.now() - started).toBeLessThan(5_000);
    const ps = await run(["ps", "-eo", "args"]);
    expect(ps.output).not.toMatch(/sleep.30[012]/);
  });

  it("does not count a background child that holds the output as a time limit: the command exited in time", async () => {
    const result = await sh("sleep 304 & echo hi; exit 2", { timeoutMs: 1_000 });
    expect(result).toMatchObject({ exitCode: 2, output: "hi\n", timedOut: false });
    // Docker semantics: the child lives on (as after `docker exec`); this one is ours to end.
    expect((await run(["pkill", "-f", "^sleep 304"])).exitCode).toBe(0);
  });

  it("reports an OOM kill by the memory limit, also when the command itself exits 0", async () => {
    const killed = await run(["python3", "-c", "b = bytearray(400 * 1024 * 1024)"]);
    expect(killed).toMatchObject({ exitCode: 137, oomKilled: true });
    const hidden = await sh("python3 -c 'b = bytearray(400 * 1024 * 1024)'; echo survived");
    expect(hidden).toMatchObject({ exitCode: 0, oomKilled: true });
    expect(hidden.output).toContain("survived");
    expect(await run(["python3", "-c", "b = bytearray(10 * 1024 * 1024)"])).toMatchObject({ exitCode: 0, oomKilled: false });
  });

  it("stops a (bounded) fork loop at the pids limit", async () => {
    const script = [
      "import os, signal, time",
      "pids = []",
      "for _ in range(200):",
      "    try:",
      "        pid = os.fork()",
      "    except OSError:",
      "        break",
      "    if pid == 0:",
      "        time.sleep(60)",
      "        os._exit(0)",
      "    pids.append(pid)",
      "print(len(pids))",
      "for pid in pids:",
      "    os.kill(pid, signal.SIGKILL)",
    ].join("\n");
    const result = await run(["python3", "-c", script]);
    expect(result.exitCode).toBe(0);
    expect(Number(result.output.trim())).toBeLessThan(64);
  });

  it("has no network but loopback with mode none", async () => {
    const devices = await run(["cat", "/proc/net/dev"]);
    const names = devices.output.split("\n").slice(2).filter(Boolean).map((line) => line.split(":")[0]?.trim());
    expect(names).toEqual(["lo"]);
    const connect = await run(["python3", "-c", "import socket; socket.create_connection(('1.1.1.1', 80), timeout=3)"]);
    expect(connect.exitCode).not.toBe(0);
    expect(connect.output).toMatch(/unreachable|Errno/i);
  });

  it("writes and reads files: parents made, mode and owner, missing and too large are typed", async () => {
    await docker.writeFile(box.id, "/work/app/deep/er/notes.txt", "héllo\n");
    expect(Buffer.from(await docker.readFile(box.id, "/work/app/deep/er/notes.txt", 100)).toString("utf8")).toBe("héllo\n");
    const binary = new Uint8Array(70_000).map((_, i) => i % 251);
    await docker.writeFile(box.id, "/tmp/owned/data.bin", binary, { mode: 0o600, user: "nobody" });
    expect(Buffer.compare(Buffer.from(await docker.readFile(box.id, "/tmp/owned/data.bin", 70_000)), Buffer.from(binary))).toBe(0);
    expect((await run(["stat", "-c", "%U %a", "/tmp/owned", "/tmp/owned/data.bin"])).output).toBe("nobody 755\nnobody 600\n");
    // Through a symlink, as a process in the container would read it.
    expect((await docker.readFile(box.id, "/usr/bin/python3", 50_000_000)).length).toBeGreaterThan(1_000_000);

    expect((await rejection(docker.readFile(box.id, "/work/app/missing.txt", 100))).code).toBe("file_not_found");
    expect((await rejection(docker.readFile(box.id, "/work/app", 100))).code).toBe("file_not_found");
    const large = await rejection(docker.readFile(box.id, "/tmp/owned/data.bin", 69_999));
    expect(large.code).toBe("file_too_large");
    expect(large.details).toMatchObject({ size: 70_000, maxBytes: 69_999 });
  });

  it("writes a tree of files in one go, modes kept and parents made, and refuses a path that leaves its directory", async () => {
    const bytes = (text: string) => new TextEncoder().encode(text);
    await docker.writeFiles(box.id, "/opt/tree/tests", [
      { relativePath: "test.sh", mode: 0o755, bytes: bytes("#!/bin/sh\necho ok\n") },
      { relativePath: "data/cases/one.txt", mode: 0o644, bytes: bytes("1\n") },
    ]);
    expect((await run(["stat", "-c", "%a %n", "/opt/tree/tests/test.sh", "/opt/tree/tests/data/cases/one.txt"])).output).toBe("755 /opt/tree/tests/test.sh\n644 /opt/tree/tests/data/cases/one.txt\n");
    expect((await run(["/opt/tree/tests/test.sh"])).output).toBe("ok\n");
    for (const relativePath of ["../escape.txt", "/etc/passwd", "a//b"]) {
      expect((await rejection(docker.writeFiles(box.id, "/opt/tree", [{ relativePath, mode: 0o644, bytes: bytes("x") }]))).code).toBe("sandbox_unavailable");
    }
  });

  it("snapshots a container into an image that a fork starts from, and the two diverge", async () => {
    await docker.writeFile(box.id, "/work/app/state.txt", "parent before\n");
    const image = await docker.snapshot(box.id, labels);
    expect(image).toMatch(/^sha256:/);
    const fork = await docker.create(spec({ image, labels: { ...labels, role: "fork" } }));
    expect(fork.imageDigest).toBe(image);
    expect((await run(["cat", "/work/app/state.txt"])).output).toBe("parent before\n");
    expect((await docker.exec(fork.id, ["cat", "/work/app/state.txt"], quick)).output).toBe("parent before\n");
    await docker.writeFile(fork.id, "/work/app/state.txt", "fork after\n");
    await docker.writeFile(box.id, "/work/app/state.txt", "parent after\n");
    expect(Buffer.from(await docker.readFile(fork.id, "/work/app/state.txt", 100)).toString()).toBe("fork after\n");
    expect(Buffer.from(await docker.readFile(box.id, "/work/app/state.txt", 100)).toString()).toBe("parent after\n");

    expect((await docker.list({ ...labels, role: "fork" })).map((c) => c.id)).toEqual([fork.id]);
    expect((await docker.listImages(labels)).map((i) => i.id)).toContain(image);
    // In use by the fork: refused, and it stays.
    expect((await rejection(docker.removeImage(image))).code).toBe("sandbox_unavailable");
    await docker.destroy(fork.id);
    await docker.removeImage(image);
    await docker.removeImage(image);
    expect((await docker.listImages(labels)).map((i) => i.id)).not.toContain(image);
  });

  it("claims a named box atomically: of eight claims at once, one gets it and seven find the name gone", async () => {
    const name = `edgegym-test-warm-${runId}`;
    const warm = await docker.create(spec({ labels: { ...labels, role: "warm" } }), { name });
    expect((await docker.list({ ...labels, role: "warm" }))[0]?.name).toBe(name);
    const claims = await Promise.all(Array.from({ length: 8 }, (_, i) => docker.claim(name, `${name}-claimed-${i}`)));
    expect(claims.filter((id) => id === warm.id)).toHaveLength(1);
    expect(claims.filter((id) => id === null)).toHaveLength(7);
    const [listed] = await docker.list({ ...labels, role: "warm" });
    expect(listed?.name).toBe(`${name}-claimed-${claims.indexOf(warm.id)}`);
    expect(await docker.claim(name, `${name}-late`)).toBeNull();
    await docker.destroy(warm.id);
  });

  it("lists by label, destroys idempotently, and a container destroyed under or before an exec is sandbox_lost", async () => {
    const dying = await docker.create(spec({ labels: { ...labels, role: "dying" } }));
    const pending = rejection(docker.exec(dying.id, ["sleep", "30"], quick));
    await sleep(500);
    await docker.destroy(dying.id);
    expect((await pending).code).toBe("sandbox_lost");

    const doomed = await docker.create(spec({ labels: { ...labels, role: "doomed" } }));
    const listed = await docker.list({ ...labels, role: "doomed" });
    expect(listed).toEqual([{ id: doomed.id, name: expect.any(String), labels: expect.objectContaining({ role: "doomed" }), running: true, createdAtMs: expect.any(Number) }]);
    expect(Math.abs(listed[0]!.createdAtMs - Date.now())).toBeLessThan(120_000);
    expect(await docker.inspect(doomed.id)).toMatchObject({ running: true, labels: { role: "doomed" } });
    await docker.destroy(doomed.id);
    await docker.destroy(doomed.id);
    expect(await docker.inspect(doomed.id)).toBeNull();
    expect(await docker.list({ ...labels, role: "doomed" })).toEqual([]);
    expect((await rejection(docker.exec(doomed.id, ["true"], quick))).code).toBe("sandbox_lost");
    expect((await rejection(docker.readFile(doomed.id, "/etc/hostname", 100))).code).toBe("sandbox_lost");
    expect((await rejection(docker.writeFile(doomed.id, "/tmp/x", "x"))).code).toBe("sandbox_lost");
  });

  it("refuses an allowlist it cannot read rather than widening it, and a missing image", async () => {
    // Checked before anything is made (allowlists that work: docker-egress.node.test.ts).
    const allowlist = await rejection(docker.create(spec({ network: { mode: "allowlist", hosts: ["https://pypi.org"] } })));
    expect(allowlist.code).toBe("sandbox_start_failed");
    expect(allowlist.message).toMatch(/is not a host name/);
    expect((await rejection(docker.create(spec({ image: `edgegym-test/missing:${runId}` })))).code).toBe("sandbox_start_failed");
    expect(await docker.list({ ...labels, role: "never" })).toEqual([]);
  });

  it("builds an image from a context directory, and a failing build is sandbox_build_failed with its log", async () => {
    const dir = mkdtempSync(join(tmpdir(), "edgegym-build-"));
    try {
      writeFileSync(join(dir, "Dockerfile"), `FROM ${BASE}\nCOPY hello.txt /hello.txt\nRUN echo built-${runId} > /built.txt\n`);
      writeFileSync(join(dir, "hello.txt"), "from the context\n");
      const tag = `edgegym-test/build:${runId}`;
      expect(await docker.imageExists(tag)).toBe(false);
      const built = await docker.buildImage(dir, tag, { timeoutMs: 60_000, labels });
      expect(built).toMatchObject({ image: tag, digest: expect.stringMatching(/^sha256:/) });
      expect(built.log).toContain(`built-${runId}`);
      expect(await docker.imageExists(tag)).toBe(true);
      const made = await docker.create(spec({ image: tag }));
      expect((await docker.exec(made.id, ["cat", "/hello.txt", "/built.txt"], quick)).output).toBe(`from the context\nbuilt-${runId}\n`);
      await docker.destroy(made.id);
      await docker.removeImage(tag);
      expect(await docker.imageExists(tag)).toBe(false);

      writeFileSync(join(dir, "Dockerfile.bad"), `FROM ${BASE}\nRUN echo about-to-fail-${runId} && exit 3\n`);
      const failed = await rejection(docker.buildImage(dir, `edgegym-test/bad:${runId}`, { timeoutMs: 60_000, labels, dockerfile: "Dockerfile.bad" }));
      expect(failed.code).toBe("sandbox_build_failed");
      expect(String(failed.details?.logTail)).toContain(`about-to-fail-${runId}`);
      expect(failed.message).toMatch(/returned a non-zero code: 3/);

      // Past its time limit a build is cancelled, and its intermediate container goes.
      writeFileSync(join(dir, "Dockerfile.slow"), `FROM ${BASE}\nRUN echo slow-${runId} && sleep 60\n`);
      const slow = await rejection(docker.buildImage(dir, `edgegym-test/slow:${runId}`, { timeoutMs: 2_500, labels, dockerfile: "Dockerfile.slow" }));
      expect(slow.code).toBe("sandbox_build_failed");
      expect(slow.details).toMatchObject({ timedOut: true });
      const step = /Running in ([0-9a-f]{12})/.exec(String(slow.details?.logTail))?.[1];
      expect(step).toBeDefined();
      for (let tries = 0; (await docker.inspect(step!)) !== null; tries++) {
        expect(tries).toBeLessThan(100);
        await sleep(200);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
