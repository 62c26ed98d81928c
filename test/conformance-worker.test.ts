import { describeDevWorkerConformance } from "./conformance/dev-worker.js";

// The Worker as users run it locally (`npm run dev:worker`, episodes in the local D1).
describeDevWorkerConformance({ name: "Worker in workerd (npm run dev:worker, local D1)", tmpPrefix: "edgegym-conformance-worker-" });
