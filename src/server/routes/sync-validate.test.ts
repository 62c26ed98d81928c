import { afterEach, describe, expect, it } from "vitest";
import { inProcessApp } from "../../../test/support/in-process.js";

const apps: ReturnType<typeof inProcessApp>[] = [];
afterEach(() => {
  while (apps.length) apps.pop()?.close();
});

// The step route validates with zod's sync parse instead of the generated validators: it must answer as they did.
describe("the step route's own validation", () => {
  it("answers bad params, bodies and media types with the same codes and messages as the generated validators", async () => {
    const app = inProcessApp();
    apps.push(app);
    const id = (await app.call("POST", "/v1/envs/reverse-text/episodes", {})).json.episode_id as string;
    const raw = (body: string | undefined, type?: string) =>
      app.app.request(`/v1/episodes/${id}/step`, { method: "POST", ...(body === undefined ? {} : { body }), headers: type === undefined ? {} : { "content-type": type } });

    const missing = await app.call("POST", `/v1/episodes/${id}/step`, { message: { role: "assistant", content: "x" } });
    expect([missing.status, missing.json.error.code]).toEqual([400, "invalid_request"]);
    expect(missing.json.error.message).toMatch(/^invalid request json: turn: /);
    expect(missing.json.error.details.issues[0].path).toEqual(["turn"]);

    const extra = await app.call("POST", `/v1/episodes/${id}/step`, { turn: 0, message: { role: "assistant", content: "x" }, extra: 1 });
    expect([extra.status, extra.json.error.code]).toEqual([400, "invalid_request"]);

    const longId = await app.call("POST", `/v1/episodes/${"e".repeat(65)}/step`, { turn: 0, message: { role: "assistant", content: "x" } });
    expect([longId.status, longId.json.error.code]).toEqual([400, "invalid_request"]);
    expect(longId.json.error.message).toMatch(/^invalid request param: episode_id: /);

    const malformed = await raw('{"turn": 0, "message": ', "application/json");
    expect([malformed.status, ((await malformed.json()) as { error: { code: string } }).error.code]).toEqual([400, "malformed_json"]);
    const text = await raw("{}", "text/plain");
    expect([text.status, ((await text.json()) as { error: { code: string } }).error.code]).toEqual([415, "unsupported_media_type"]);
    const suffixed = await raw(JSON.stringify({ turn: 0, message: { role: "assistant", content: "olleh" } }), "application/vnd.edgegym+json; charset=utf-8");
    expect(suffixed.status).toBe(200);
    const empty = await raw(undefined);
    expect([empty.status, ((await empty.json()) as { error: { code: string } }).error.code]).toEqual([400, "invalid_request"]);

    const ok = await app.call("POST", `/v1/episodes/${id}/step`, { turn: 1, message: { role: "assistant", content: "x" } });
    expect(ok.status).toBe(409);
    expect(ok.headers.get("x-request-id")).toMatch(/^req_/);
  });
});
