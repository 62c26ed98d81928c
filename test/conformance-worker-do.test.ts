import { describeDevWorkerConformance } from "./conformance/dev-worker.js";

// The Worker with episodes in Durable Objects (EDGEGYM_EPISODE_STORE=durable-objects): one
// SQLite-backed object per episode and the index object, in workerd via `npm run dev:worker`,
// with the eval jobs in the local D1.
describeDevWorkerConformance({
  name: "Worker in workerd, one Durable Object per episode",
  tmpPrefix: "edgegym-conformance-worker-do-",
  vars: { EDGEGYM_EPISODE_STORE: "durable-objects" },
});
