import { afterEach, describe, expect, it } from "vitest";
import { MAX_TASK_INDEX } from "../../protocol/index.js";
import { inProcessApp } from "../../../test/support/in-process.js";

const apps: ReturnType<typeof inProcessApp>[] = [];
function setup() {
  const app = inProcessApp();
  apps.push(app);
  return app;
}
afterEach(() => {
  while (apps.length) apps.pop()?.close();
});

describe("GET /v1/envs/{env_id}/examples is bounded", () => {
  it("refuses an offset past 2^53 (the loop that never ended) with 400 invalid_request", async () => {
    const { call } = setup();
    const res = await call("GET", "/v1/envs/math/examples?offset=9007199254740991&limit=100");
    expect([res.status, res.json.error.code]).toEqual([400, "invalid_request"]);
  });

  it("a procedural split ends at MAX_TASK_INDEX: the last page is short, one past is refused", async () => {
    const { call } = setup();
    const last = await call("GET", `/v1/envs/math/examples?offset=${MAX_TASK_INDEX - 1}&limit=100`);
    expect(last.status).toBe(200);
    expect(last.json.examples.map((e: { index: number }) => e.index)).toEqual([MAX_TASK_INDEX - 1, MAX_TASK_INDEX]);
    const past = await call("GET", `/v1/envs/math/examples?offset=${MAX_TASK_INDEX + 1}`);
    expect([past.status, past.json.error.code]).toEqual([400, "invalid_request"]);
  });

  it("a finite split refuses an offset past its rows before loading any", async () => {
    const { call } = setup();
    const res = await call("GET", "/v1/envs/reverse-text/examples?split=eval&offset=23");
    expect([res.status, res.json.error.code]).toEqual([422, "task_out_of_range"]);
    const end = await call("GET", "/v1/envs/reverse-text/examples?split=eval&offset=22");
    expect([end.status, end.json.examples]).toEqual([200, []]);
  });

  it("reset refuses a task index past MAX_TASK_INDEX and accepts the last one", async () => {
    const { call } = setup();
    const past = await call("POST", "/v1/envs/math/episodes", { index: MAX_TASK_INDEX + 1 });
    expect([past.status, past.json.error.code]).toEqual([400, "invalid_request"]);
    const huge = await call("POST", "/v1/envs/math/episodes", { index: 9007199254740991 });
    expect([huge.status, huge.json.error.code]).toEqual([400, "invalid_request"]);
    const last = await call("POST", "/v1/envs/math/episodes", { index: MAX_TASK_INDEX });
    expect([last.status, last.json.index]).toEqual([201, MAX_TASK_INDEX]);
  });
});
