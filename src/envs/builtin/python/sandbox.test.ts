import { afterAll, describe, expect, it } from "vitest";
import { PyodideSandbox } from "./sandbox.node.js";

// Weak isolation allowed so these functional tests also run where bubblewrap is missing (escape.test.ts covers the levels).
const sandbox = new PyodideSandbox({ workers: 1, allowWeakIsolation: true });
afterAll(() => sandbox.close());

const job = (code: string, replay: string[] = [], extra: Partial<{ timeoutMs: number; outputCap: number; seed: number }> = {}) => ({
  replay,
  code,
  seed: extra.seed ?? 1,
  timeoutMs: extra.timeoutMs ?? 5_000,
  outputCap: extra.outputCap ?? 2_000,
});

describe("PyodideSandbox", () => {
  it("reports the isolation in force", () => {
    expect(["namespaced", "process"]).toContain(sandbox.isolation().level);
    expect(new PyodideSandbox({ forbidNamespaces: true }).isolation().level).toBe("process");
  });

  it("runs code, capturing prints and showing a final expression", async () => {
    const result = await sandbox.run(job("import sys\nprint('hi')\nprint('err', file=sys.stderr)\n6 * 7"));
    expect(result).toEqual({ status: "ok", output: "hi\nerr\n42\n", truncated: false });
  }, 60_000);

  it("rebuilds the session by replaying earlier cells, their output discarded", async () => {
    const result = await sandbox.run(job("print(total(xs))", ["print('replayed')\nxs = [1, 2, 3]", "def total(v):\n    return sum(v) * 10"]));
    expect(result).toEqual({ status: "ok", output: "60\n", truncated: false });
  });

  it("starts each job from a fresh namespace", async () => {
    await sandbox.run(job("leak = 1"));
    const result = await sandbox.run(job("leak"));
    expect(result.status).toBe("error");
    expect(result.output).toBe("Traceback (most recent call last):\n  File \"<exec>\", line 1, in <module>\nNameError: name 'leak' is not defined\n");
  });

  it("reports exceptions with the user's frames only", async () => {
    const result = await sandbox.run(job("def f():\n    return 1 / 0\nf()"));
    expect(result.status).toBe("error");
    expect(result.output).toContain('File "<exec>", line 3, in <module>');
    expect(result.output).toContain('File "<exec>", line 2, in f');
    expect(result.output).toMatch(/ZeroDivisionError: division by zero\n$/);
    expect(result.output).not.toContain("_pyodide");
  });

  it("caps output", async () => {
    const result = await sandbox.run(job("for i in range(10000):\n    print('x' * 50)", [], { outputCap: 120 }));
    expect(result.status).toBe("ok");
    expect(result.output.length).toBe(120);
    expect(result.truncated).toBe(true);
  });

  it("seeds random, so a replayed session computes the same values", async () => {
    const a = await sandbox.run(job("r", ["import random\nr = random.random()"], { seed: 7 }));
    const b = await sandbox.run(job("r", ["import random\nr = random.random()"], { seed: 7 }));
    const c = await sandbox.run(job("r", ["import random\nr = random.random()"], { seed: 8 }));
    expect(a.output).toBe(b.output);
    expect(c.output).not.toBe(a.output);
  });

  it("keeps files for the job only, in a scratch folder", async () => {
    const write = "with open('notes.txt', 'w') as f:\n    f.write('kept')";
    expect((await sandbox.run(job("open('notes.txt').read()", [write]))).output).toBe("'kept'\n");
    expect((await sandbox.run(job("import os\nos.path.exists('notes.txt')"))).output).toBe("False\n");
  });

  it("hides the host: empty js globals and no server environment variables", async () => {
    process.env.EDGEGYM_SECRET_FOR_TEST = "s3cret";
    const result = await sandbox.run(job("import js, os\nprint(hasattr(js, 'process'), hasattr(js, 'fetch'))\nprint('s3cret' in str(dict(os.environ)))"));
    delete process.env.EDGEGYM_SECRET_FOR_TEST;
    expect(result.output).toBe("False False\nFalse\n");
  });

  it("stops code over its time limit and recovers with a fresh interpreter", async () => {
    const result = await sandbox.run(job("while True:\n    pass", ["x = 5"], { timeoutMs: 500 }));
    expect(result).toEqual({ status: "timeout", output: "", truncated: false, phase: "code" });
    const after = await sandbox.run(job("x + 1", ["x = 5"]));
    expect(after).toEqual({ status: "ok", output: "6\n", truncated: false });
  }, 60_000);

  it("queues jobs when every interpreter is busy", async () => {
    const results = await Promise.all([1, 2, 3].map((n) => sandbox.run(job(`${n} * 2`))));
    expect(results.map((r) => r.output)).toEqual(["2\n", "4\n", "6\n"]);
  });

  it("kills every interpreter process on close", async () => {
    const own = new PyodideSandbox({ spares: 2 });
    await own.warm();
    expect(own.liveProcesses()).toBe(2);
    await own.close();
    expect(own.liveProcesses()).toBe(0);
  }, 60_000);

  it("stops a job when the caller aborts", async () => {
    const controller = new AbortController();
    const pending = sandbox.run(job("while True:\n    pass", [], { timeoutMs: 30_000 }), controller.signal);
    setTimeout(() => controller.abort(), 300);
    expect((await pending).status).toBe("timeout");
  }, 60_000);
});
