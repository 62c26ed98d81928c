import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { streamSSE } from "hono/streaming";
import { EvalDeleteResponse, EvalId, EvalJob, EvalJobList, EvalListQuery, EvalProgressEvent, EvalRequest, EvalResultsQuery, EvalRollout, EvalStreamEvent } from "../../protocol/index.js";
import type { AppEnv } from "../context.js";
import type { EvalService } from "../evals/eval-service.js";
import { streamEvalProgress } from "../evals/progress-stream.js";
import { quotaExceeded } from "../tenants/quotas.js";
import { errorResponses, json, ndjsonStream } from "./responses.js";

const EvalParams = z.object({ eval_id: EvalId });

const createEval = createRoute({
  operationId: "createEval",
  method: "post",
  path: "/v1/evals",
  tags: ["evals"],
  summary: "Start an evaluation job",
  description:
    "Runs an environment against the model endpoint configured on the server (`EDGEGYM_EVAL_BASE_URL`, `EDGEGYM_EVAL_API_KEY`: never sent back), with the options of `edgegym eval`. The job runs in the background, stores every rollout as it finishes, and survives a restart. Each job reserves `max_concurrent` of the server's concurrent model requests while it runs; past the limit the answer is 429 with Retry-After.",
  request: { body: { required: true, content: json(EvalRequest) } },
  responses: {
    201: { description: "The job, queued or already running.", content: json(EvalJob) },
    ...errorResponses("env_not_found", "env_unavailable", "invalid_env_args", "task_out_of_range", "eval_too_large", "rate_limited", "service_unavailable", "malformed_json", "payload_too_large"),
  },
});

const listEvals = createRoute({
  operationId: "listEvals",
  method: "get",
  path: "/v1/evals",
  tags: ["evals"],
  summary: "List evaluation jobs, newest first",
  description: "Only the jobs made with this API key's tenant; an admin key (EDGEGYM_ADMIN_API_KEYS) sees every tenant's.",
  request: { query: EvalListQuery },
  responses: { 200: { description: "Jobs.", content: json(EvalJobList) }, ...errorResponses() },
});

const getEval = createRoute({
  operationId: "getEval",
  method: "get",
  path: "/v1/evals/{eval_id}",
  tags: ["evals"],
  summary: "Status and progress of a job",
  description: "Progress counts the stored rollouts; `summary` (reward mean and std, components, pass@k, stop reasons, errors, tokens, timing, histogram) is set once the job has ended.",
  request: { params: EvalParams },
  responses: { 200: { description: "The job.", content: json(EvalJob) }, ...errorResponses("eval_not_found") },
});

const cancelEval = createRoute({
  operationId: "cancelEval",
  method: "post",
  path: "/v1/evals/{eval_id}/cancel",
  tags: ["evals"],
  summary: "Cancel a job (idempotent)",
  description: "Stops the job; rollouts already stored are kept and the summary covers them.",
  request: { params: EvalParams },
  responses: { 200: { description: "The job after cancelling.", content: json(EvalJob) }, ...errorResponses("eval_not_found") },
});

const deleteEval = createRoute({
  operationId: "deleteEval",
  method: "delete",
  path: "/v1/evals/{eval_id}",
  tags: ["evals"],
  summary: "Delete an ended job and its rollouts",
  description:
    "Removes a completed, failed or cancelled job and every rollout it stored; its results are gone for good (save them first with `/results`). A queued or running job is refused with 409 `eval_running`: cancel it, then delete it. Servers with `EDGEGYM_EVAL_RETENTION_DAYS` also delete ended jobs on their own after that many days.",
  request: { params: EvalParams },
  responses: {
    200: { description: "The job is gone.", content: json(EvalDeleteResponse) },
    ...errorResponses("eval_not_found", "eval_running"),
  },
});

const evalEvents = createRoute({
  operationId: "streamEvalEvents",
  method: "get",
  path: "/v1/evals/{eval_id}/events",
  tags: ["evals"],
  summary: "Progress as server-sent events",
  description:
    "Each event is an EvalStreamEvent: a `progress` event (data: EvalProgressEvent) now and whenever a rollout is stored, then one `done` event (data: the whole EvalJob) when the job ends, after which the stream closes. A `: keep-alive` comment comes every 15 s of silence. Each API key's tenant may hold a limited number of streams open at once (429 `rate_limited` past it).",
  request: { params: EvalParams },
  responses: {
    200: { description: "An event stream.", content: { "text/event-stream": { schema: EvalStreamEvent } } },
    ...errorResponses("eval_not_found", "rate_limited"),
  },
});

const evalResults = createRoute({
  operationId: "getEvalResults",
  method: "get",
  path: "/v1/evals/{eval_id}/results",
  tags: ["evals"],
  summary: "The rollouts as JSONL",
  description: "One EvalRollout per line (the results.jsonl of `edgegym eval`, verifiers' field names), in (example_id, rollout_index) order. Readable while the job runs.",
  request: { params: EvalParams, query: EvalResultsQuery },
  responses: {
    200: { description: "Rollouts, one JSON object per line.", content: { "application/x-ndjson": { schema: EvalRollout } } },
    ...errorResponses("eval_not_found"),
  },
});

const PAGE = 500;

export function registerEvalRoutes(app: OpenAPIHono<AppEnv>, service: EvalService): void {
  // EvalProgressEvent is named only by EvalStreamEvent's contentSchema (a plain $ref), which the
  // generator does not follow. `register()` needs zod extended with `.openapi()`, which the
  // protocol (zod only) is not, so the schema, already named by its meta id, goes in as a
  // definition of its own.
  (app.openAPIRegistry as unknown as { _definitions: { type: "schema"; schema: unknown }[] })._definitions.push({ type: "schema", schema: EvalProgressEvent });
  app.openapi(createEval, async (c) => c.json(await service.create(c.get("tenant"), c.req.valid("json")), 201));

  app.openapi(listEvals, async (c) => {
    const { status, limit } = c.req.valid("query");
    return c.json({ evals: await service.list(c.get("tenant"), { status, limit }) }, 200);
  });

  app.openapi(getEval, async (c) => c.json(await service.get(c.get("tenant"), c.req.valid("param").eval_id), 200));

  app.openapi(cancelEval, async (c) => c.json(await service.cancel(c.get("tenant"), c.req.valid("param").eval_id), 200));

  app.openapi(deleteEval, async (c) => c.json(await service.delete(c.get("tenant"), c.req.valid("param").eval_id), 200));

  app.openapi(evalEvents, async (c) => {
    const id = c.req.valid("param").eval_id;
    const viewer = c.get("tenant");
    await service.exists(viewer, id);
    const streams = service.streams;
    if (!streams.tryAcquire(viewer.name)) {
      throw quotaExceeded("event_streams", streams.limit ?? 0, streams.inUse(viewer.name), 5, "close a stream first, or poll GET /v1/evals/{id}");
    }
    // Released once the stream ends, however it ends (done, client gone, error).
    let released = false;
    const release = () => {
      if (!released) streams.release(viewer.name);
      released = true;
    };
    const events = streamSSE(c, async (stream) => {
      try {
        await streamEvalProgress(stream, service, viewer, id);
      } finally {
        release();
      }
    }, async (err, stream) => {
      // streamSSE's own error path: the callback above threw (its finally already released).
      console.error(`[${c.get("requestId")}] event stream for ${id} failed:`, err);
      release();
      await stream.close();
    });
    return events;
  });

  app.openapi(evalResults, async (c) => {
    const id = c.req.valid("param").eval_id;
    const { offset, limit } = c.req.valid("query");
    const viewer = c.get("tenant");
    await service.exists(viewer, id);
    const end = limit === undefined ? Infinity : offset + limit;
    let at = offset;
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const take = Math.min(PAGE, end - at);
        const rows = take > 0 ? await service.results(viewer, id, at, take) : [];
        at += rows.length;
        if (rows.length) controller.enqueue(encoder.encode(rows.map((r) => `${JSON.stringify(r)}\n`).join("")));
        if (rows.length < take || at >= end || take <= 0) controller.close();
      },
    });
    return ndjsonStream(c.body(body, 200, { "Content-Type": "application/x-ndjson; charset=utf-8" }));
  });
}
