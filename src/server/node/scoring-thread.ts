// A scoring thread (started by ./scoring-threads.ts): imports one `--env` module again and
// scores its environments' rubrics there, so a reward function that never returns blocks
// this thread, never the server's, and the server can stop it. Wire (structured clone):
// in, {type: "score", id, envId, services, group} and {type: "ping", id}; out, "started"
// when a job begins (its time budget counts from then), then "scored" or "failed", and
// "pong" for a ping (a thread that cannot answer one is stuck). When the module fails to
// import here, a job answers "failed" alone.
import { parentPort, workerData } from "node:worker_threads";
import type { EnvServices } from "../../envs/judges.js";
import { scoreRubricGroup, type RewardInputs } from "../../envs/rubric.js";
import type { AnyEnvironment } from "../../envs/types.js";
import { environmentsIn } from "../../envs/load-env-modules.node.js";

/** What a job sends of a rollout: everything the rubric reads but the parser, which is the environment's own. */
export type SentInputs = Omit<RewardInputs<unknown>, "parser">;

export type ToThread = { type: "score"; id: number; envId: string; services: EnvServices | null; group: SentInputs[] } | { type: "ping"; id: number };

export type FromThread =
  | { type: "started"; id: number }
  | { type: "scored"; id: number; scores: unknown[] }
  | { type: "failed"; id: number; error: string }
  | { type: "pong"; id: number };

export interface ThreadData {
  moduleUrl: string;
}

const port = parentPort;
if (port) {
  const { moduleUrl } = workerData as ThreadData;
  // Imported at once, so a thread started ahead of its first job is ready for it.
  const loaded: Promise<AnyEnvironment[]> = import(moduleUrl).then((mod: Record<string, unknown>) => environmentsIn(mod));
  loaded.catch(() => {}); // a job reports it
  const bound = new Map<string, AnyEnvironment>();

  const environment = (envs: AnyEnvironment[], envId: string, services: EnvServices | null): AnyEnvironment => {
    const env = envs.find((e) => e.id === envId);
    if (!env) throw new Error(`${moduleUrl} exports no environment "${envId}" in the scoring thread`);
    if (!services || !env.withServices) return env;
    const key = `${envId}\n${JSON.stringify(services)}`;
    let withServices = bound.get(key);
    if (!withServices) bound.set(key, (withServices = env.withServices(services)));
    return withServices;
  };

  const post = (message: FromThread): void => port.postMessage(message);

  port.on("message", (message: ToThread) => {
    if (message.type === "ping") return post({ type: "pong", id: message.id });
    const { id, envId, services, group } = message;
    void (async () => {
      try {
        // The module's import (once per thread) is not the rollout's to pay for; the server imported it already, so it ends.
        const envs = await loaded;
        post({ type: "started", id });
        const env = environment(envs, envId, services);
        const scores = await scoreRubricGroup(env.rubric as AnyEnvironment["rubric"], group.map((inputs) => ({ ...inputs, parser: env.parser })));
        post({ type: "scored", id, scores });
      } catch (err) {
        post({ type: "failed", id, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
      }
    })();
  });

  // A reward function's stray promise must not end the thread (and every job on it): said, and kept going.
  process.on("unhandledRejection", (reason) => console.error(`scoring thread (${moduleUrl}): unhandled rejection:`, reason));
  process.on("uncaughtException", (err) => console.error(`scoring thread (${moduleUrl}): uncaught exception:`, err));
}
