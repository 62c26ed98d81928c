import { describe, expect, it } from "vitest";
import { ERROR_STATUS, type ErrorCode } from "../../src/protocol/index.js";
import { jsonInit, readReply, type HttpReply } from "../support/reply.js";

/** Where the server under test answers, and what it was started with. */
export interface ConformanceOptions {
  /** Names the describe block, e.g. "node server (child process)". */
  name: string;
  /** Read when the tests run, so a beforeAll may start the server first. No trailing slash. */
  baseUrl: () => string;
  /** The key the server was started with; the suite also checks that /v1 refuses requests without it. */
  apiKey?: string;
  /** What /health must report. */
  runtime?: "node" | "worker";
  /** Transport; global fetch unless given (e.g. a Worker's own fetch handler inside workerd). */
  fetch?: (request: Request) => Promise<Response>;
}

export type { HttpReply };

/** One HTTP client for the suite: JSON in and out, the bearer key unless `auth: false`. */
export function conformanceClient(options: ConformanceOptions) {
  const send = options.fetch ?? ((request: Request) => fetch(request));
  return async (method: string, path: string, body?: unknown, init: { headers?: Record<string, string>; auth?: boolean } = {}): Promise<HttpReply> => {
    const headers: Record<string, string> = {};
    if (options.apiKey && init.auth !== false) headers.authorization = `Bearer ${options.apiKey}`;
    Object.assign(headers, init.headers);
    return readReply(await send(new Request(`${options.baseUrl()}${path}`, jsonInit(method, body, headers))));
  };
}

const answer = (text: string) => ({ role: "assistant", content: `<answer>${text}</answer>` });
const reversed = (text: string) => Array.from(text).reverse().join("");

/** Every error: its code's one status, the one error shape, the request id of the header. */
export function expectError(res: HttpReply, code: ErrorCode): void {
  expect({ status: res.status, code: res.json?.error?.code }, res.text).toEqual({ status: ERROR_STATUS[code], code });
  expect(Object.keys(res.json).sort()).toEqual(["error"]);
  expect(res.json.error.message).toEqual(expect.any(String));
  expect(res.json.error.message.length).toBeGreaterThan(0);
  expect(res.json.error.request_id).toBe(res.headers.get("x-request-id"));
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
}

/**
 * The HTTP contract every edgegym server keeps, whatever runs it: the Node server and
 * the Worker in workerd both pass it. It talks only HTTP (reset, step, score, errors,
 * auth), so it says nothing about how a runtime stores episodes.
 *
 * @example
 * describeHttpConformance({ name: "node", baseUrl: () => server.url, apiKey: "sk-test", runtime: "node" });
 */
export function describeHttpConformance(options: ConformanceOptions): void {
  const call = conformanceClient(options);
  const newEpisode = async (body: Record<string, unknown> = { index: 0 }) => {
    const res = await call("POST", "/v1/envs/reverse-text/episodes", body);
    expect(res.status, res.text).toBe(201);
    return res.json as { episode_id: string; messages: { role: string; content: string }[] };
  };

  describe(`HTTP conformance: ${options.name}`, () => {
    it("answers /health without a key and names its runtime", async () => {
      const res = await call("GET", "/health", undefined, { auth: false });
      expect(res.status).toBe(200);
      expect(res.json).toMatchObject({ status: "ok", version: expect.any(String) });
      if (options.runtime) expect(res.json.runtime).toBe(options.runtime);
    });

    it.runIf(options.apiKey)("refuses /v1 without the key or with a wrong one, and accepts the key", async () => {
      const none = await call("GET", "/v1/envs", undefined, { auth: false });
      expectError(none, "unauthorized");
      expect(none.headers.get("www-authenticate")).toBe("Bearer");
      const wrong = await call("POST", "/v1/envs/reverse-text/episodes", { index: 0 }, { auth: false, headers: { authorization: "Bearer sk-not-this-one" } });
      expectError(wrong, "unauthorized");
      expect((await call("GET", "/v1/envs")).status).toBe(200);
    });

    it("lists reverse-text and describes it", async () => {
      const list = await call("GET", "/v1/envs");
      expect(list.status).toBe(200);
      expect(list.json.envs.map((e: { id: string }) => e.id)).toContain("reverse-text");
      const info = await call("GET", "/v1/envs/reverse-text");
      expect(info.json).toMatchObject({ id: "reverse-text", max_turns: 1, splits: { train: 198, eval: 22 } });
    });

    it("runs reset → step → score, and scoring again returns the same bytes", async () => {
      const reset = await call("POST", "/v1/envs/reverse-text/episodes", { split: "train", index: 3, seed: 11 });
      expect(reset.status).toBe(201);
      expect(reset.json).toMatchObject({ turn: 0, done: false, index: 3, seed: 11, tools: [] });
      const id = reset.json.episode_id as string;
      const prompt = reset.json.messages.at(-1).content as string;

      const step = await call("POST", `/v1/episodes/${id}/step`, { turn: 0, message: answer(reversed(prompt)) });
      expect(step.status, step.text).toBe(200);
      expect(step.json).toMatchObject({ episode_id: id, turn: 1, done: true, stop_reason: "single_turn", truncated: false, messages: [] });

      const score = await call("POST", `/v1/episodes/${id}/score`);
      expect(score.status).toBe(200);
      expect(score.json.score.reward).toBeCloseTo(1.2, 10);
      expect(score.json.score.components).toEqual([
        { name: "lcs_ratio", weight: 1, score: 1 },
        { name: "format", weight: 0.2, score: 1 },
      ]);
      const again = await call("POST", `/v1/episodes/${id}/score`);
      expect(again.text).toBe(score.text);

      const episode = await call("GET", `/v1/episodes/${id}`);
      expect(episode.json).toMatchObject({ episode_id: id, status: "done", turn: 1, done: true, score: score.json.score });
      expect(episode.json.messages.at(-1)).toEqual(answer(reversed(prompt)));
    });

    it("answers a retried step with the stored bytes and applies it once", async () => {
      const { episode_id: id } = await newEpisode();
      const first = await call("POST", `/v1/episodes/${id}/step`, { turn: 0, message: answer("abc") });
      expect(first.status).toBe(200);
      const retry = await call("POST", `/v1/episodes/${id}/step`, { turn: 0, message: answer("abc") });
      expect(retry.status).toBe(200);
      expect(retry.text).toBe(first.text);
      const episode = await call("GET", `/v1/episodes/${id}`);
      expect(episode.json.messages.filter((m: { role: string }) => m.role === "assistant")).toHaveLength(1);
    });

    it("answers a retry of an earlier turn, not only the last, with that turn's stored bytes", async () => {
      const reset = await call("POST", "/v1/envs/double-check/episodes", { index: 0 });
      expect(reset.status).toBe(201);
      const id = reset.json.episode_id as string;
      const first = await call("POST", `/v1/episodes/${id}/step`, { turn: 0, message: answer("1") });
      const second = await call("POST", `/v1/episodes/${id}/step`, { turn: 1, message: answer("2") });
      expect([first.status, second.status, second.json.done]).toEqual([200, 200, true]);
      const retryFirst = await call("POST", `/v1/episodes/${id}/step`, { turn: 0, message: answer("1") });
      const retrySecond = await call("POST", `/v1/episodes/${id}/step`, { turn: 1, message: answer("2") });
      expect([retryFirst.text, retrySecond.text]).toEqual([first.text, second.text]);
      expectError(await call("POST", `/v1/episodes/${id}/step`, { turn: 0, message: answer("other") }), "turn_conflict");
    });

    it("applies one step once when the same request arrives several times at once", async () => {
      const { episode_id: id } = await newEpisode({ index: 1 });
      const replies = await Promise.all(Array.from({ length: 6 }, () => call("POST", `/v1/episodes/${id}/step`, { turn: 0, message: answer("same") })));
      expect(replies.map((r) => r.status)).toEqual(Array(6).fill(200));
      expect(new Set(replies.map((r) => r.text)).size).toBe(1);
      const episode = await call("GET", `/v1/episodes/${id}`);
      expect(episode.json.messages.filter((m: { role: string }) => m.role === "assistant")).toHaveLength(1);
    });

    it("lets exactly one of several different messages racing for the same turn win; the others get 409 and the transcript holds the winner's", async () => {
      const { episode_id: id } = await newEpisode({ index: 1 });
      const messages = Array.from({ length: 5 }, (_, i) => answer(`racer ${i}`));
      const replies = await Promise.all(messages.map((message) => call("POST", `/v1/episodes/${id}/step`, { turn: 0, message })));
      const won = replies.flatMap((r, i) => (r.status === 200 ? [i] : []));
      expect(won).toHaveLength(1);
      for (const r of replies) if (r.status !== 200) expectError(r, "turn_conflict");
      const episode = await call("GET", `/v1/episodes/${id}`);
      const assistant = episode.json.messages.filter((m: { role: string }) => m.role === "assistant");
      expect(assistant).toEqual([expect.objectContaining({ content: messages[won[0] as number]?.content })]);
      expect(episode.json.turn).toBe(1);
    });

    it("answers 409 turn_conflict for a different message at a stale turn or a future turn", async () => {
      const { episode_id: id } = await newEpisode();
      expectError(await call("POST", `/v1/episodes/${id}/step`, { turn: 2, message: answer("x") }), "turn_conflict");
      expect((await call("POST", `/v1/episodes/${id}/step`, { turn: 0, message: answer("abc") })).status).toBe(200);
      const stale = await call("POST", `/v1/episodes/${id}/step`, { turn: 0, message: answer("different") });
      expectError(stale, "turn_conflict");
      expect(stale.json.error.details).toEqual({ episode_turn: 1 });
    });

    it("answers 409 episode_done for a step after the episode ended", async () => {
      const { episode_id: id } = await newEpisode();
      await call("POST", `/v1/episodes/${id}/step`, { turn: 0, message: answer("abc") });
      expectError(await call("POST", `/v1/episodes/${id}/step`, { turn: 1, message: answer("again") }), "episode_done");
    });

    it("returns the same episode for a repeated Idempotency-Key, and 409 when the body differs", async () => {
      const headers = { "idempotency-key": `conformance-${crypto.randomUUID()}` };
      const a = await call("POST", "/v1/envs/reverse-text/episodes", { index: 5 }, { headers });
      const b = await call("POST", "/v1/envs/reverse-text/episodes", { index: 5 }, { headers });
      expect([a.status, b.status]).toEqual([201, 201]);
      expect(b.json.episode_id).toBe(a.json.episode_id);
      expect(b.headers.get("idempotent-replayed")).toBe("true");
      expectError(await call("POST", "/v1/envs/reverse-text/episodes", { index: 6 }, { headers }), "idempotency_key_reused");
    });

    it("closes idempotently and refuses steps on a closed episode", async () => {
      const { episode_id: id } = await newEpisode();
      const first = await call("DELETE", `/v1/episodes/${id}`);
      const second = await call("DELETE", `/v1/episodes/${id}`);
      expect(first.json).toEqual({ episode_id: id, status: "closed" });
      expect(second.text).toBe(first.text);
      expectError(await call("POST", `/v1/episodes/${id}/step`, { turn: 0, message: answer("x") }), "episode_closed");
    });

    it("reports unknown things with their codes", async () => {
      expectError(await call("POST", "/v1/envs/no-such-env/episodes", {}), "env_not_found");
      expectError(await call("GET", "/v1/envs/no-such-env"), "env_not_found");
      expectError(await call("GET", "/v1/episodes/ep_missing"), "episode_not_found");
      expectError(await call("POST", "/v1/episodes/ep_missing/step", { turn: 0, message: answer("x") }), "episode_not_found");
      expectError(await call("POST", "/v1/episodes/ep_missing/score"), "episode_not_found");
      expectError(await call("DELETE", "/v1/episodes/ep_missing"), "episode_not_found");
      expectError(await call("GET", "/v1/nothing-here"), "route_not_found");
    });

    it("rejects bad tasks and env args with 422", async () => {
      expectError(await call("POST", "/v1/envs/reverse-text/episodes", { split: "eval", index: 22 }), "task_out_of_range");
      expectError(await call("POST", "/v1/envs/reverse-text/episodes", { args: { nope: 1 } }), "invalid_env_args");
    });

    it("answers malformed JSON with 400 malformed_json", async () => {
      expectError(await call("POST", "/v1/envs/reverse-text/episodes", "{not json"), "malformed_json");
      const { episode_id: id } = await newEpisode();
      expectError(await call("POST", `/v1/episodes/${id}/step`, '{"turn": 0, "message": '), "malformed_json");
    });

    it("answers a body that is not JSON with 415 unsupported_media_type (a plain curl -d)", async () => {
      const form = await call("POST", "/v1/envs/reverse-text/episodes", "index=0", { headers: { "content-type": "application/x-www-form-urlencoded" } });
      expectError(form, "unsupported_media_type");
      expectError(await call("POST", "/v1/envs/reverse-text/episodes", "{}", { headers: { "content-type": "text/plain" } }), "unsupported_media_type");
      // JSON with a charset or a +json type is still JSON.
      expect((await call("POST", "/v1/envs/reverse-text/episodes", '{"index":0}', { headers: { "content-type": "application/json; charset=utf-8" } })).status).toBe(201);
    });

    it("answers JSON nested past 64 levels with 400 json_too_deep", async () => {
      const deep = `{"index":0,"metadata":{"a":${"[".repeat(5000)}${"]".repeat(5000)}}}`;
      const res = await call("POST", "/v1/envs/reverse-text/episodes", deep);
      expectError(res, "json_too_deep");
      expect(res.json.error.details).toEqual({ max_depth: 64 });
      const objects = `{"index":0,"metadata":${'{"a":'.repeat(5000)}1${"}".repeat(5000)}}`;
      expectError(await call("POST", "/v1/envs/reverse-text/episodes", objects), "json_too_deep");
      // Brackets inside strings are not nesting.
      expect((await call("POST", "/v1/envs/reverse-text/episodes", { index: 0, metadata: { s: "[".repeat(100) } })).status).toBe(201);
    });

    it("rejects __proto__, constructor and prototype keys anywhere in a body", async () => {
      for (const key of ["__proto__", "constructor", "prototype"]) {
        const res = await call("POST", "/v1/envs/reverse-text/episodes", `{"index":0,"metadata":{"ok":[{"${key}":{"polluted":true}}]}}`);
        expectError(res, "invalid_request");
        expect(res.json.error.details.issues[0].path).toEqual(["metadata", "ok", 0, key]);
      }
      const { episode_id: id } = await newEpisode();
      expectError(await call("POST", `/v1/episodes/${id}/step`, '{"turn":0,"__proto__":{},"message":{"role":"assistant","content":"x"}}'), "invalid_request");
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it("answers a wrong method with 405 method_not_allowed and an Allow header", async () => {
      const res = await call("DELETE", "/v1/envs");
      expectError(res, "method_not_allowed");
      expect(res.headers.get("allow")).toBe("GET, HEAD");
      const { episode_id: id } = await newEpisode();
      const put = await call("PUT", `/v1/episodes/${id}`, {});
      expectError(put, "method_not_allowed");
      expect(put.headers.get("allow")).toBe("DELETE, GET, HEAD");
      expect((await call("GET", `/v1/episodes/${id}/step`)).headers.get("allow")).toBe("POST");
      expectError(await call("GET", "/v1/nothing-here"), "route_not_found");
    });

    it("rejects unknown fields with 400 invalid_request and says which", async () => {
      const reset = await call("POST", "/v1/envs/reverse-text/episodes", { index: 0, bogus: true });
      expectError(reset, "invalid_request");
      expect(reset.json.error.message).toMatch(/bogus/);
      const { episode_id: id } = await newEpisode();
      const step = await call("POST", `/v1/episodes/${id}/step`, { turn: 0, message: answer("x"), extra: 1 });
      expectError(step, "invalid_request");
      expect(step.json.error.message).toMatch(/extra/);
      expectError(await call("POST", `/v1/episodes/${id}/step`, { turn: 0, message: { role: "user", content: "hi" } }), "invalid_request");
    });

    it("refuses a body over the limit with 413 and keeps the client's request id", async () => {
      const big = await call("POST", "/v1/envs/reverse-text/episodes", { metadata: { pad: "x".repeat(1_100_000) } }, { headers: { "x-request-id": "trace-42" } });
      expectError(big, "payload_too_large");
      expect(big.json.error.request_id).toBe("trace-42");
      // The unread body must not break the client's next request (a reused connection).
      expect((await call("GET", "/health", undefined, { auth: false })).status).toBe(200);
    });

    it("scores completions statelessly", async () => {
      const res = await call("POST", "/v1/envs/reverse-text/score", {
        items: [{ prompt: "abc", completion: "<answer>cba</answer>", answer: "cba" }],
      });
      expect(res.status, res.text).toBe(200);
      expect(res.json.results[0].score.reward).toBeCloseTo(1.2, 10);
    });

    it("serves its OpenAPI document", async () => {
      const doc = await call("GET", "/openapi.json", undefined, { auth: false });
      expect(doc.status).toBe(200);
      expect(doc.json.openapi).toBe("3.1.0");
      expect(Object.keys(doc.json.paths)).toContain("/v1/episodes/{episode_id}/step");
    });
  });
}
