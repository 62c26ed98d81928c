import { afterAll, describe, expect, it } from "vitest";
import { inProcessApp } from "../../../../test/support/in-process.js";
import { createRng } from "../../rng.js";
import { createPythonEnv, MAX_CELLS, pythonEnvDeclaration } from "./index.js";
import { PyodideSandbox } from "./sandbox.node.js";
import { normaliseInteger, pythonTask } from "./tasks.js";

// Weak isolation allowed so the environment tests also run where bubblewrap is missing; the refusal has its own test.
const sandbox = new PyodideSandbox({ allowWeakIsolation: true });
const pythonEnv = createPythonEnv(sandbox);
afterAll(() => sandbox.close());

const toolCall = (id: string, code: string) => ({
  role: "assistant" as const,
  content: null,
  tool_calls: [{ id, type: "function" as const, function: { name: "python", arguments: JSON.stringify({ code }) } }],
});

describe("python tasks", () => {
  it("generates every kind with exact answers, reproducibly", () => {
    const kinds = new Set<string>();
    for (let i = 0; i < 60; i++) kinds.add(String(pythonTask(createRng(i, 1)).info?.kind));
    expect(kinds).toEqual(new Set(["prime_sum", "divisible_xor", "last_digits", "factorial_digits", "coin_change"]));
    expect(pythonTask(createRng(5, 1))).toEqual(pythonTask(createRng(5, 1)));
  });

  it("normalises stated integers", () => {
    expect(normaliseInteger(" 1,234,567 ")).toBe("1234567");
    expect(normaliseInteger("42.0")).toBe("42");
    expect(normaliseInteger("about 42")).toBeNull();
  });
});

describe("python environment", () => {
  it("hides the session state from the tool schema", () => {
    const [tool] = pythonEnv.toolDefinitions();
    expect(tool?.function.name).toBe("python");
    expect(Object.keys(tool?.function.parameters.properties as object)).toEqual(["code"]);
  });

  it("runs a multi-call session over HTTP, the variables kept in the stored state, and scores the answer", async () => {
    const app = inProcessApp({ envs: [pythonEnv] });
    try {
      // Find a prime-sum task, so the test knows which code solves it.
      let index = 0;
      while (pythonEnv.dataset.row("train", index) && (await pythonEnv.dataset.row("train", index)).info?.kind !== "prime_sum") index++;
      const task = await pythonEnv.dataset.row("train", index);
      const n = Number(/below (\d+)/.exec(String(task.prompt))?.[1]);

      const reset = await app.call("POST", "/v1/envs/python/episodes", { index, args: { timeout_ms: 1_500 } });
      expect(reset.status).toBe(201);
      expect(reset.json.tools[0].function.name).toBe("python");
      const id = reset.json.episode_id;

      const s1 = await app.call("POST", `/v1/episodes/${id}/step`, { turn: 0, message: toolCall("c1", `n = ${n}\nsieve = [True] * n\nprint('limit set')`) });
      expect(s1.json.messages).toEqual([{ role: "tool", tool_call_id: "c1", content: "limit set\n" }]);
      const s2 = await app.call("POST", `/v1/episodes/${id}/step`, {
        turn: 1,
        message: toolCall("c2", "for i in range(2, int(n ** 0.5) + 1):\n    if sieve[i]:\n        sieve[i*i::i] = [False] * len(sieve[i*i::i])\nsum(i for i in range(2, n) if sieve[i])"),
      });
      expect(s2.json.messages[0].content).toBe(`${task.answer}\n`);
      const slow = await app.call("POST", `/v1/episodes/${id}/step`, { turn: 2, message: toolCall("c3", "n = 0\nwhile True:\n    pass") });
      expect(slow.json.messages[0].content).toBe("Error: the code ran longer than 1500 ms and was stopped; nothing it defined is kept.");
      const s4 = await app.call("POST", `/v1/episodes/${id}/step`, { turn: 3, message: toolCall("c4", "n") });
      expect(s4.json.messages[0].content).toBe(`${n}\n`); // the stopped cell's `n = 0` was not kept

      const episode = await app.call("GET", `/v1/episodes/${id}`);
      expect(episode.json.done).toBe(false);
      const last = await app.call("POST", `/v1/episodes/${id}/step`, { turn: 4, message: { role: "assistant", content: `<answer>${Number(task.answer).toLocaleString("en-US")}</answer>` } });
      expect(last.json).toMatchObject({ done: true, stop_reason: "no_tool_calls" });
      const score = await app.call("POST", `/v1/episodes/${id}/score`);
      expect(score.json.score.components).toEqual([
        { name: "correct", weight: 1, score: 1 },
        { name: "format", weight: 0.2, score: 1 },
      ]);
      expect(score.json.score.metrics).toEqual({ turns: 5, tool_calls: 4, "tool_calls/python": 4, tool_errors: 1 });
    } finally {
      app.close();
    }
  }, 90_000);

  it("reports its isolation in /health and GET /v1/envs/python", async () => {
    const app = inProcessApp({ envs: [pythonEnv] });
    try {
      const level = sandbox.isolation().level;
      const health = await app.call("GET", "/health");
      expect(health.json.isolation.python).toMatchObject({ level, served: true });
      const info = await app.call("GET", "/v1/envs/python");
      expect(info.json.isolation).toMatchObject({ level, served: true });
    } finally {
      app.close();
    }
  });

  it("refuses python at weak isolation unless the operator opts in, saying why and how", async () => {
    const weak = new PyodideSandbox({ forbidNamespaces: true });
    const app = inProcessApp({ envs: [createPythonEnv(weak)] });
    try {
      const reset = await app.call("POST", "/v1/envs/python/episodes", {});
      expect(reset.status).toBe(422);
      expect(reset.json.error.code).toBe("env_unavailable");
      expect(reset.json.error.message).toContain("only weak isolation");
      expect(reset.json.error.message).toContain("--allow-weak-python-sandbox");
      expect(reset.json.error.message).toContain("python_allow_weak_sandbox");
      expect(reset.json.error.message).toContain("EDGEGYM_PYTHON_ALLOW_WEAK_SANDBOX");
      expect((await app.call("GET", "/health")).json.isolation.python).toMatchObject({ level: "process", served: false });
      expect((await weak.run({ replay: [], code: "1", seed: 1, timeoutMs: 1_000, outputCap: 100 })).status).toBe("crashed");
    } finally {
      app.close();
    }
    const optedIn = inProcessApp({ envs: [createPythonEnv(new PyodideSandbox({ forbidNamespaces: true, allowWeakIsolation: true }))] });
    try {
      expect((await optedIn.call("POST", "/v1/envs/python/episodes", {})).status).toBe(201);
      expect((await optedIn.call("GET", "/v1/envs/python")).json.isolation).toMatchObject({ level: "process", served: true });
    } finally {
      optedIn.close();
    }
  });

  it("caps the cells of a session, so replay cannot grow without limit", async () => {
    const [tool] = pythonEnv.tools;
    const cells = Array.from({ length: MAX_CELLS }, () => "x = 1");
    const state = { cells, seed: 1, timeoutMs: 1_000, outputCap: 100 };
    const out = await tool?.run({ code: "x", ...state }, { state, signal: new AbortController().signal });
    expect(String(out)).toMatch(/^Error: this session is full/);
    expect(cells).toHaveLength(MAX_CELLS);
  });

  it("is declared unavailable on the Worker runtime", async () => {
    const app = inProcessApp({ envs: [pythonEnvDeclaration], runtime: "worker" });
    try {
      const res = await app.call("POST", "/v1/envs/python/episodes", {});
      expect(res.status).toBe(422);
      expect(res.json.error.code).toBe("env_unavailable");
    } finally {
      app.close();
    }
  });
});
