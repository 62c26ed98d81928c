import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { builtinEnvs } from "../../src/envs/index.js";
import { createWorker } from "../../src/server/worker/worker.js";
import { describeVersionConformance } from "../conformance/version-conformance.js";

// Each "deploy" is a new Worker over the same local D1, as a redeployed Worker with
// changed environment code would be.
describeVersionConformance({
  name: "Worker in workerd, D1",
  serve: (envs) => {
    const worker = createWorker(envs);
    return async (request) => {
      const ctx = createExecutionContext();
      const res = await worker.fetch(request, env, ctx);
      await waitOnExecutionContext(ctx);
      return res;
    };
  },
});

describe("D1 after 0003_env_hash", () => {
  it("has the migration applied and steps a row from before it (no hash) on its version", async () => {
    const applied = await env.DB.prepare("SELECT name FROM d1_migrations ORDER BY id").all<{ name: string }>();
    expect(applied.results.map((r) => r.name)).toContain("0003_env_hash.sql");
    const worker = createWorker(builtinEnvs);
    const send = async (method: string, path: string, body?: unknown) => {
      const ctx = createExecutionContext();
      const init: RequestInit = { method, headers: body === undefined ? {} : { "content-type": "application/json" } };
      if (body !== undefined) init.body = JSON.stringify(body);
      const res = await worker.fetch(new Request(`http://edgegym.test${path}`, init), env, ctx);
      await waitOnExecutionContext(ctx);
      return { status: res.status, json: (await res.json()) as Record<string, unknown> };
    };
    const reset = await send("POST", "/v1/envs/reverse-text/episodes", { index: 1 });
    const id = reset.json.episode_id as string;
    // What a row written before the migration holds.
    await env.DB.prepare("UPDATE episodes SET env_hash = NULL WHERE id = ?").bind(id).run();
    expect((await send("GET", `/v1/episodes/${id}`)).json.env_hash).toBeNull();
    const step = await send("POST", `/v1/episodes/${id}/step`, { turn: 0, message: { role: "assistant", content: "<answer>x</answer>" } });
    expect(step.status).toBe(200);
    const rescore = await send("POST", `/v1/episodes/${id}/rescore`, {});
    expect(rescore.json).toMatchObject({ episode_env_hash: null, env_hash: reset.json.env_hash });
  });
});
