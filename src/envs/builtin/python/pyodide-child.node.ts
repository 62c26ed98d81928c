// One sandboxed OS process = one Python job. Started by ./process-pool.node.ts under Node's
// permission model (read access to the Pyodide assets and this file only; no child processes,
// workers, addons or WASI; code generation from strings off), with an empty environment, and
// inside bubblewrap's namespaces where the host allows it. It loads Pyodide (from a memory
// snapshot when the parent sends one), says "ready", runs exactly one job and exits, so nothing
// a job does to the interpreter (builtins, sys.modules, __main__) can reach another job.
//
// Wire: stdin carries frames [u32 big-endian length][bytes]: first the snapshot (length 0 =
// load cold), then the job as JSON. stdout carries one JSON object per line.
// Written with erasable types only and no imports but node:*, so Node runs the .ts directly
// in tests and module resolution needs no read access outside the allowed paths.
import { constants as fsConstants } from "node:fs";

interface Job {
  replay: string[];
  code: string;
  seed: number;
  outputCap: number;
}

type Emscripten = { runPython(code: string, options?: { filename?: string }): unknown; globals: { get(name: string): unknown }; toPy(value: unknown): { destroy(): void }; makeMemorySnapshot(): Uint8Array };
type LoadPyodide = (options: Record<string, unknown>) => Promise<Emscripten>;

// Pyodide's NODEFS reads fs open flags through process.binding("constants"), which the
// permission model refuses; hand it the same constants from node:fs and nothing else.
const binding = (name: string): unknown => {
  if (name === "constants") return { fs: fsConstants };
  throw new Error("process.binding is not available in the sandbox");
};
(process as unknown as { binding: typeof binding }).binding = binding;

// A job signals no process, its own and the sandbox's init (its `process.ppid`) included:
// the pid namespace already hides every process outside the sandbox, and this makes
// `process.kill(process.ppid)` fail outright instead of ending the sandbox's own init.
const refuseSignal = (): never => {
  throw Object.assign(new Error("kill EPERM: the python sandbox signals no process"), { code: "EPERM", syscall: "kill" });
};
process.kill = refuseSignal;
(process as unknown as { _kill: typeof refuseSignal })._kill = refuseSignal;

const send = (message: Record<string, unknown>): void => {
  process.stdout.write(`${JSON.stringify(message)}\n`);
};

/** Reads length-prefixed frames from stdin, one at a time (chunks joined once per frame: the snapshot is ~30 MB). */
function frameReader(): () => Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  let wake: (() => void) | undefined;
  let ended = false;
  process.stdin.on("data", (chunk: Buffer) => {
    chunks.push(chunk);
    size += chunk.length;
    wake?.();
  });
  process.stdin.on("end", () => {
    ended = true;
    wake?.();
  });
  return async () => {
    for (;;) {
      if (size >= 4) {
        // Join only when the whole frame is here, so a large frame is copied once.
        if (chunks.length > 1 && (chunks[0] as Buffer).length < 4) chunks.splice(0, chunks.length, Buffer.concat(chunks));
        const length = (chunks[0] as Buffer).readUInt32BE(0);
        if (size >= 4 + length) {
          const all = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
          chunks.length = 0;
          const rest = all.subarray(4 + length);
          if (rest.length > 0) chunks.push(rest);
          size = rest.length;
          return all.subarray(4, 4 + length);
        }
      }
      if (ended) process.exit(0); // the parent went away: nothing to do
      await new Promise<void>((resolve) => (wake = resolve));
    }
  };
}

/**
 * Per job: a scratch working folder, `random` seeded, a fresh namespace; the replayed cells
 * run with output discarded; then the new cell with stdout/stderr captured up to the cap
 * (a capped writer, so a print loop cannot fill memory before the time limit).
 */
const PRELUDE = `
import io, os, sys, random, tempfile, traceback
from pyodide.code import eval_code

class _CappedText(io.TextIOBase):
    def __init__(self, cap):
        self.cap = cap
        self.parts = []
        self.size = 0
        self.truncated = False
    def writable(self):
        return True
    def write(self, s):
        room = self.cap - self.size
        if room > 0:
            kept = s[:room]
            self.parts.append(kept)
            self.size += len(kept)
        if len(s) > max(room, 0):
            self.truncated = True
        return len(s)
    def getvalue(self):
        return "".join(self.parts)

def _user_traceback(exc):
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == "<exec>"]
    lines = []
    if frames:
        lines.append("Traceback (most recent call last):\\n")
        lines.extend(traceback.format_list(frames))
    lines.extend(traceback.format_exception_only(type(exc), exc))
    return "".join(lines)

def _run_cell(code, ns, out):
    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = out
    try:
        value = eval_code(code, ns)
        if value is not None:
            print(repr(value))
        return "ok"
    except BaseException as exc:
        print(_user_traceback(exc), end="")
        return "error"
    finally:
        sys.stdout, sys.stderr = saved

def _edgegym_job(replay, code, seed, cap, on_replayed):
    os.chdir(tempfile.mkdtemp(prefix="cell-"))
    random.seed(seed)
    ns = {"__name__": "__main__"}
    for cell in replay:
        _run_cell(cell, ns, _CappedText(0))
    on_replayed()
    out = _CappedText(cap)
    status = _run_cell(code, ns, out)
    return [status, out.getvalue(), out.truncated]
`;

const [pyodideUrl, mode] = process.argv.slice(2);
if (!pyodideUrl) throw new Error("usage: pyodide-child <pyodide.mjs url> [snapshot]");
const { loadPyodide } = (await import(pyodideUrl)) as { loadPyodide: LoadPyodide };
const nextFrame = frameReader();
const quiet = (): undefined => undefined;

if (mode === "snapshot") {
  // Make the memory snapshot every job process starts from: Pyodide loaded, the prelude run.
  const pyodide = await loadPyodide({ jsglobals: {}, stdout: quiet, stderr: quiet, _makeSnapshot: true });
  pyodide.runPython(PRELUDE, { filename: "<edgegym-sandbox>" });
  const snapshot = pyodide.makeMemorySnapshot();
  const header = Buffer.alloc(4);
  header.writeUInt32BE(snapshot.length);
  process.stdout.write(Buffer.concat([header, snapshot]), () => process.exit(0));
} else {
  const snapshot = await nextFrame();
  // jsglobals: {} keeps Python's `js` module from exposing this process's globals.
  const pyodide = await loadPyodide({ jsglobals: {}, stdout: quiet, stderr: quiet, ...(snapshot.length > 0 ? { _loadSnapshot: snapshot } : {}) });
  if (snapshot.length === 0) pyodide.runPython(PRELUDE, { filename: "<edgegym-sandbox>" });
  send({ type: "ready" });
  const job = JSON.parse((await nextFrame()).toString("utf8")) as Job;
  const run = pyodide.globals.get("_edgegym_job") as (replay: unknown, code: string, seed: number, cap: number, onReplayed: () => void) => { toJs(): unknown[] };
  const replay = pyodide.toPy(job.replay);
  try {
    const [status, output, truncated] = run(replay, job.code, job.seed, job.outputCap, () => send({ type: "replayed" })).toJs() as [string, string, boolean];
    send({ type: "result", status, output, truncated });
  } catch (err) {
    send({ type: "result", status: "crashed", output: err instanceof Error ? err.message.split("\n")[0] : String(err), truncated: false });
  }
  process.stdout.write("", () => process.exit(0));
}
