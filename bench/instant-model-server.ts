/**
 * An OpenAI-compatible server that answers reverse-text perfectly and at once, for
 * `npm run bench:eval` (run in its own process so it does not share the evaluator's
 * event loop). Prints its base URL on stdout, then serves until killed.
 *
 *   npx tsx bench/instant-model-server.ts [PORT]
 */
import { reverseLastUser, startScriptedModel } from "../test/support/scripted-model.js";

const server = await startScriptedModel(reverseLastUser, { port: Number(process.argv[2] ?? 0), record: false });
console.log(server.baseUrl);
const stop = (): void => {
  server.close().then(() => process.exit(0), () => process.exit(1));
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
