import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { freePort, REPO_ROOT } from "../../test/support/node-server.js";

/** The Python of scripts/openenv-venv.sh (made or checked on the way: openenv-core and aiohttp, pinned) and the openenv-core version in it. */
export function openenvPython(): { python: string; version: string } {
  const python = execFileSync("bash", ["scripts/openenv-venv.sh"], { cwd: REPO_ROOT, encoding: "utf8" }).trim().split("\n").at(-1) as string;
  const version = execFileSync(python, ["-c", "import importlib.metadata as m; print(m.version('openenv-core'))"], { encoding: "utf8" }).trim();
  return { python, version };
}

export interface PeerServer {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * A peer's server that a benchmark measures edgegym against (openenv-core's echo server
 * under uvicorn): `python script port`, ready once GET /health answers. It shares this
 * process's output and process group, so its tracebacks show as they happen and Ctrl-C
 * stops it with the benchmark.
 */
export async function startPeerServer(name: string, python: string, script: string): Promise<PeerServer> {
  const port = await freePort();
  const child = spawn(python, [script, String(port)], { stdio: ["ignore", "inherit", "inherit"] });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/health`)).ok) break;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`${name} did not answer /health within 60 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    child,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
        setTimeout(() => child.kill("SIGKILL"), 5_000).unref();
      }),
  };
}
