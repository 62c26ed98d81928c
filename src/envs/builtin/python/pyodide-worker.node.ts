// Worker thread: one Pyodide interpreter, loaded once (about 2-4 s), running one job at a
// time. Written with erasable types only, so Node can run the .ts file directly in tests.
import { parentPort } from "node:worker_threads";
import { loadPyodide } from "pyodide";

interface RunMessage {
  type: "run";
  id: number;
  replay: string[];
  code: string;
  seed: number;
  outputCap: number;
}

/**
 * Per job: a scratch working folder, `random` seeded, a fresh namespace; the replayed cells
 * run with output discarded; then the new cell with stdout/stderr captured up to the cap
 * (a capped writer, so a print loop cannot fill memory before the time limit). Modules the
 * job imported are dropped afterwards so one episode's module state does not reach another.
 */
const PRELUDE = `
import io, os, sys, random, shutil, tempfile, traceback
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

_BASE_MODULES = set(sys.modules)

def _edgegym_job(replay, code, seed, cap, on_replayed):
    work = tempfile.mkdtemp(prefix="cell-")
    os.chdir(work)
    random.seed(seed)
    ns = {"__name__": "__main__"}
    try:
        for cell in replay:
            _run_cell(cell, ns, _CappedText(0))
        on_replayed()
        out = _CappedText(cap)
        status = _run_cell(code, ns, out)
        return [status, out.getvalue(), out.truncated]
    finally:
        os.chdir("/")
        shutil.rmtree(work, ignore_errors=True)
        for name in set(sys.modules) - _BASE_MODULES:
            del sys.modules[name]
`;

const port = parentPort;
if (!port) throw new Error("pyodide-worker runs as a worker thread");

// jsglobals: {} keeps Python's \`js\` module from exposing this thread's globals.
const pyodide = await loadPyodide({ jsglobals: {}, stdout: () => undefined, stderr: () => undefined });
// Its own file name, so tracebacks can keep only the user's frames ("<exec>").
pyodide.runPython(PRELUDE, { filename: "<edgegym-sandbox>" });
const job = pyodide.globals.get("_edgegym_job") as (replay: unknown, code: string, seed: number, cap: number, onReplayed: () => void) => { toJs(): unknown[]; destroy(): void };

port.on("message", (msg: RunMessage) => {
  if (msg.type !== "run") return;
  const replay = pyodide.toPy(msg.replay);
  try {
    const result = job(replay, msg.code, msg.seed, msg.outputCap, () => port.postMessage({ type: "replayed", id: msg.id }));
    const [status, output, truncated] = result.toJs() as [string, string, boolean];
    result.destroy();
    port.postMessage({ type: "result", id: msg.id, status, output, truncated });
  } catch (err) {
    port.postMessage({ type: "result", id: msg.id, status: "crashed", output: err instanceof Error ? err.message : String(err), truncated: false });
  } finally {
    replay.destroy();
  }
});
port.postMessage({ type: "ready" });
