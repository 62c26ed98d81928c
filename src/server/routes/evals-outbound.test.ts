import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { inProcessApp } from "../../../test/support/in-process.js";
import { startRecordingServer } from "../../../test/support/recording-server.js";
import { reverseLastUser, startScriptedModel } from "../../../test/support/scripted-model.js";
import { builtinEnvs, EnvRegistry } from "../../envs/index.js";
import { EvalRequest, type EvalJob } from "../../protocol/index.js";
import { createApp } from "../app.js";
import { sqliteEvalStore } from "../db/eval-store.js";
import { openNodeDatabase } from "../db/node-sqlite.js";
import type { ServerConfig } from "../context.js";

// Issue 18: eval sampling_args reached the operator's model endpoint unchecked, and
// model errors (endpoint URL, errno, the upstream's body) were stored on rollout rows.
const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  while (cleanup.length) await cleanup.pop()?.();
});

function app(config: Partial<ServerConfig>) {
  const built = inProcessApp({ config: { evalApiKey: "sk-operator", ...config } });
  built.evals.start(200);
  cleanup.push(async () => {
    await built.evals.stop();
    built.close();
  });
  return built;
}

async function waitEnded(call: ReturnType<typeof inProcessApp>["call"], id: string): Promise<EvalJob> {
  for (const until = Date.now() + 20_000; Date.now() < until; await new Promise((r) => setTimeout(r, 25))) {
    const job = (await call("GET", `/v1/evals/${id}`)).json as EvalJob;
    if (["completed", "failed", "cancelled"].includes(job.status)) return job;
  }
  throw new Error(`job ${id} did not end`);
}

describe("POST /v1/evals sampling_args", () => {
  it("refuses n, stream and max_tokens past the cap before anything is stored or sent", async () => {
    const endpoint = await startRecordingServer();
    cleanup.push(() => endpoint.close());
    const { call } = app({ evalBaseUrl: endpoint.baseURL, evalModel: "m", evalMaxTokens: 2048 });
    const attacks: [Record<string, unknown>, RegExp][] = [
      [{ sampling_args: { n: 128 } }, /sampling_args\.n: each rollout is one completion/],
      [{ sampling_args: { max_tokens: 100000 } }, /sampling_args\.max_tokens: at most 2048 on this server/],
      [{ max_tokens: 100000 }, /max_tokens 100000 is past this server's limit of 2048/],
      [{ sampling_args: { stream: true } }, /sampling_args\.stream is not accepted/],
      [{ sampling_args: { logit_bias: Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [String(i), 100])) } }, /at most 300 token ids/],
    ];
    for (const [body, message] of attacks) {
      const res = await call("POST", "/v1/evals", { env_id: "reverse-text", num_examples: 1, rollouts_per_example: 1, ...body });
      expect([res.status, res.json.error.code]).toEqual([400, "invalid_request"]);
      expect(res.json.error.message).toMatch(message);
    }
    expect((await call("GET", "/v1/evals")).json.evals).toEqual([]);
    await new Promise((r) => setTimeout(r, 100));
    expect(endpoint.requests).toEqual([]);
  });

  it("sends allowed keys, and the operator's max_tokens cap when the job names none", async () => {
    const m = await startScriptedModel(reverseLastUser);
    cleanup.push(() => m.close());
    const { call } = app({ evalBaseUrl: m.baseUrl, evalModel: "m", evalMaxTokens: 300 });
    const created = await call("POST", "/v1/evals", { env_id: "reverse-text", num_examples: 1, rollouts_per_example: 1, sampling_args: { top_p: 0.5, seed: 3 } });
    expect(created.status).toBe(201);
    expect(created.json.request.max_tokens).toBe(300);
    expect((await waitEnded(call, created.json.eval_id)).status).toBe("completed");
    expect(m.requests[0]).toMatchObject({ max_tokens: 300, top_p: 0.5, seed: 3 });
  });
});

describe("a job stored before the caps (an earlier version, looser settings)", () => {
  it("fails on resume instead of sending n: 128 with the operator's key", async () => {
    const endpoint = await startRecordingServer();
    cleanup.push(() => endpoint.close());
    const database = openNodeDatabase(":memory:");
    const now = Date.now();
    const request = EvalRequest.parse({ env_id: "reverse-text", model: "m", num_examples: 1, rollouts_per_example: 1, split: "eval", sampling_args: { n: 128, max_tokens: 100000 } });
    await sqliteEvalStore(database.db).insertJob({
      id: "ev_old", envId: "reverse-text", envVersion: "1", model: "m", status: "queued", request, split: "eval", numExamples: 1, totalRollouts: 1,
      summary: null, error: null, cancelRequested: false, leaseOwner: null, leaseExpiresAt: null, runMs: 0, createdAt: now, updatedAt: now, startedAt: null, finishedAt: null,
    });
    const built = createApp({ db: database.db, registry: new EnvRegistry("node", builtinEnvs), config: { evalBaseUrl: endpoint.baseURL, evalApiKey: "sk-operator" } });
    built.evals.start(200);
    cleanup.push(async () => {
      await built.evals.stop();
      database.close();
    });
    const call = async (method: string, path: string) => {
      const res = await built.app.request(path, { method });
      return { json: (await res.json()) as unknown };
    };
    const job = await waitEnded(call as ReturnType<typeof inProcessApp>["call"], "ev_old");
    expect(job).toMatchObject({ status: "failed", error: expect.stringMatching(/^sampling_args\.n: each rollout is one completion/) });
    expect(endpoint.requests).toEqual([]);
  });
});

describe("server-run eval model errors", () => {
  it("store a stable code and a neutral text; the endpoint's address and reply body go to the log only", async () => {
    const upstream = createServer((_req, res) => {
      res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "key sk-operator rejected by upstream-secret-body" } }));
    });
    await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
    cleanup.push(() => new Promise<void>((r) => upstream.close(() => r())));
    const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
    const logged: string[] = [];
    vi.spyOn(console, "error").mockImplementation((...parts: unknown[]) => void logged.push(parts.map(String).join(" ")));
    const { call } = app({ evalBaseUrl: base, evalModel: "m" });
    const created = await call("POST", "/v1/evals", { env_id: "reverse-text", num_examples: 1, rollouts_per_example: 1, max_retries: 0 });
    const job = await waitEnded(call, created.json.eval_id);
    const results = await call("GET", `/v1/evals/${job.eval_id}/results`);
    const row = JSON.parse(results.text.trim().split("\n")[0] as string);
    expect(row.error).toMatchObject({ error: "model_auth_error", error_chain_str: `the model endpoint refused the server's credentials (eval job ${job.eval_id}; details in the server log)` });
    for (const text of [results.text, JSON.stringify(job)]) {
      for (const leak of ["upstream-secret-body", "sk-operator", base, "127.0.0.1"]) expect(text).not.toContain(leak);
    }
    expect(logged.some((l) => l.includes(job.eval_id) && l.includes("upstream-secret-body"))).toBe(true);
  });
});
