import { z } from "zod";
import { toolEnv } from "../../define.js";
import { EngineError } from "../../engine.js";
import { defineRubric } from "../../rubric.js";
import { SandboxError, type SandboxNetwork, type SandboxSpec } from "../../sandbox/types.js";
import type { Environment, StopCondition, TaskRow } from "../../types.js";
import type { HarborRuntime } from "./runtime.js";
import { HarborState, initialHarborState } from "./state.js";
import type { HarborTaskDir } from "./task-dir.node.js";
import { harborTools, secondsLeft } from "./tools.js";
import { runVerifier, type VerifierResult } from "./verifier.js";

const Args = z
  .object({
    task: z.string().min(1).max(300).optional().meta({ description: "The task's name (`[task].name`, or its directory's name); without it `index` or `seed` picks one." }),
  })
  .strict();
type Args = z.infer<typeof Args>;

/** Turns one episode may take; each is one model message with its tool calls. */
const MAX_TURNS = 200;

const SYSTEM_PROMPT =
  "You are working in your own Linux container. Use the tools to run shell commands and to read, write and edit files " +
  "until the task is done; nothing outside the container is needed. When the task is done, reply without calling a tool.";

function taskRow(task: HarborTaskDir): TaskRow {
  return { prompt: task.config.instruction, info: { task: task.name, ...(Object.keys(task.config.metadata).length ? { metadata: task.config.metadata } : {}) } };
}

/**
 * The agent phase's network, unless the operator forces every box offline. A harness
 * episode's box must reach the server's model endpoint, which listens on the egress
 * network's gateway: an offline task goes there with an empty allowlist (the gateway and
 * nothing else), never with `--network none`.
 */
function agentNetwork(task: HarborTaskDir, runtime: HarborRuntime, harness: boolean): SandboxNetwork {
  const network = runtime.forceNoNetwork ? { mode: "none" as const } : task.config.network.agent;
  return harness && network.mode === "none" ? { mode: "allowlist", hosts: [] } : network;
}

/** The box of a task's episode: from `image` (the task's, or a fork's snapshot), with the task's limits, network and settings. */
export function harborBoxSpec(task: HarborTaskDir, runtime: HarborRuntime, image: string, labels: Record<string, string>, harness = false): SandboxSpec {
  const config = task.config;
  return {
    image,
    limits: { ...runtime.defaults, ...config.limits },
    network: agentNetwork(task, runtime, harness),
    labels,
    ...(config.workdir ? { workdir: config.workdir } : {}),
    env: config.env,
  };
}

/** An environment failure with its own code: a build or start failure is the server's or the task's, never the agent's. */
function sandboxFailure(err: unknown): never {
  if (err instanceof SandboxError) {
    const code = err.code === "sandbox_build_failed" ? "sandbox_build_failed" : err.code === "sandbox_lost" ? "sandbox_lost" : "sandbox_start_failed";
    throw new EngineError(code, err.message, err.details);
  }
  throw err;
}

/**
 * Harbor task directories as one environment, `harbor`: each task is a row; a reset makes
 * the episode its own container from the task's image, the model works in it through
 * `bash`, `read_file`, `write_file` and `edit_file`, and the score runs the task's tests
 * there as Harbor's verifier does. The container is named in the state (any server process
 * serves any step), labelled with its episode (a sweep removes it if the episode ends
 * without a close), and released when the episode is closed or scored.
 */
export function createHarborEnv(tasks: readonly HarborTaskDir[], runtime: HarborRuntime): Environment<Args, HarborState> {
  if (!tasks.length) throw new Error("harbor: no tasks (give a directory of Harbor task directories)");
  const byName = new Map<string, HarborTaskDir>();
  for (const task of tasks) {
    byName.set(task.name, task);
    const dirName = task.dir.split("/").pop();
    if (dirName && !byName.has(dirName)) byName.set(dirName, task);
  }
  const taskNamed = (name: string): HarborTaskDir => {
    const task = byName.get(name);
    if (!task) throw new EngineError("invalid_env_args", `harbor: no task named "${name}"; tasks: ${tasks.map((t) => t.name).join(", ")}`);
    return task;
  };
  const rows = tasks.map(taskRow);
  const verified = new WeakMap<object, VerifierResult>();

  const agentTimeout: StopCondition<HarborState> = {
    name: "agent_timeout",
    truncates: true,
    check: ({ state }) => secondsLeft(state) === 0,
  };
  const lost: StopCondition<HarborState> = { name: "sandbox_lost", truncates: true, check: ({ state }) => state.lost };

  const forkBoxes = async (state: HarborState, { episodeIds, tenant }: { episodeIds: readonly string[]; tenant: string | undefined }): Promise<HarborState[]> => {
    const task = taskNamed(state.task);
    if (state.lost) throw new EngineError("sandbox_lost", `the container of this episode is gone; it cannot be forked`);
    await runtime.admit(tenant, { count: episodeIds.length });
    // A commit of the parent's filesystem (paused for the copy), then one box per fork from it: N branches start identical.
    const image = await runtime.provider.snapshot(state.sandbox.id, runtime.snapshotLabels).catch(sandboxFailure);
    const made = await Promise.allSettled(episodeIds.map((id) => runtime.provider.create(harborBoxSpec(task, runtime, image, runtime.labels(id, tenant), state.agent !== undefined))));
    const boxes = made.flatMap((m) => (m.status === "fulfilled" ? [m.value] : []));
    const failed = made.find((m): m is PromiseRejectedResult => m.status === "rejected");
    if (failed) {
      await Promise.allSettled(boxes.map((box) => runtime.provider.destroy(box.id)));
      await runtime.provider.removeImage(image).catch(() => undefined);
      sandboxFailure(failed.reason);
    }
    return boxes.map((box) => ({ ...state, sandbox: { ...box, imageDigest: box.imageDigest || image }, snapshot: image }));
  };

  /** A provider without snapshots: said with its own reason, so a client knows a fork can never work here (not a failure to retry). */
  const refuseFork = async (): Promise<HarborState[]> => {
    throw new EngineError(
      "fork_unavailable",
      `this server's sandboxes (${runtime.provider.name}) keep no snapshot of a container's files, so a fork cannot start from its parent's; start a new episode, or fork on a server with the Docker provider`,
      { reason: "no_snapshot" },
    );
  };

  return toolEnv<Args, HarborState>({
    id: "harbor",
    version: "0.1.0",
    description: `Harbor tasks (${tasks.length}): each episode works in its own container from the task's image, with bash and file tools; scored by the task's own tests.`,
    systemPrompt: SYSTEM_PROMPT,
    argsSchema: Args as z.ZodType<Args>,
    stateSchema: HarborState,
    dataset: {
      size: () => rows.length,
      row: (_split, index, args) => {
        const named = (args as Args | undefined)?.task;
        if (named) return taskRow(taskNamed(named));
        const row = rows[index];
        if (!row) throw new RangeError(`index ${index} is outside the ${rows.length} Harbor tasks`);
        return row;
      },
    },
    maxTurns: MAX_TURNS,
    tools: harborTools(runtime.provider),
    stopConditions: [lost, agentTimeout],
    // The Node server's Docker, or the Worker's Containers: whichever runtime built it gave it a provider.
    runtimes: ["node", "worker"],
    setup: async (row, { episodeId, tenant, harness = false }) => {
      const task = taskNamed(String(row.info?.task));
      if (!episodeId) throw new EngineError("env_unavailable", "harbor episodes are made by a server (they need an episode id to label their container)");
      const { image, digest } = await runtime.imageFor(task).catch(sandboxFailure);
      const spec = harborBoxSpec(task, runtime, image, runtime.labels(episodeId, tenant), harness);
      // Warm boxes sit on the task's own network; a harness box needs the endpoint's.
      if (runtime.claimWarm && !harness) {
        // A warm box creates nothing: only the tenant's cap applies to it.
        await runtime.admit(tenant, { claim: true });
        const warm = await runtime.claimWarm(spec, episodeId, tenant).catch(sandboxFailure);
        if (warm) return { state: initialHarborState(task, warm, digest) };
      }
      await runtime.admit(tenant);
      const record = await runtime.provider.create(spec).catch(sandboxFailure);
      return { state: initialHarborState(task, record, digest) };
    },
    episodeResources: {
      harness: {
        target: (state) => {
          const task = taskNamed(state.task);
          return {
            provider: runtime.provider,
            sandbox: state.sandbox,
            ...(state.agentUser ? { user: state.agentUser } : {}),
            ...(state.workdir ? { workdir: state.workdir } : {}),
            env: state.env,
            instruction: task.config.instruction,
          };
        },
      },
      release: async (state) => {
        await runtime.provider.destroy(state.sandbox.id);
        // Other forks may still run on the snapshot: then the removal is refused, and the last one's release (or the sweep) removes it.
        if (state.snapshot) await runtime.provider.removeImage(state.snapshot).catch(() => undefined);
      },
      fork: runtime.forks === false ? refuseFork : forkBoxes,
    },
    rubric: defineRubric<HarborState>(
      [
        {
          name: "tests",
          weight: 1,
          description: "The task's own tests (tests/test.sh), run in the episode's container: the reward they write.",
          fn: async ({ state }) => {
            if (!state) throw new Error("harbor_needs_episode: a Harbor task is scored in its episode's container; score the episode (POST /v1/episodes/{id}/score)");
            const task = taskNamed(state.task);
            // A harness box of an offline task was on the endpoint's network while its agent ran; the tests run as offline as the task asks.
            const offline = runtime.forceNoNetwork || task.config.network.verifier.mode === "none";
            if (state.agent && offline && runtime.provider.detachNetworks) await runtime.provider.detachNetworks(state.sandbox.id);
            const result = await runVerifier(runtime.provider, task, state);
            verified.set(state, result);
            return result.reward;
          },
        },
      ],
      ({ state }) => ({ ...(state ? verified.get(state)?.metrics : {}), commands: state?.commands ?? 0, command_seconds: Math.round((state?.commandMs ?? 0) / 100) / 10 }),
    ),
  });
}
