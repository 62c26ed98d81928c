import { z } from "zod";
import type { EnvInfo } from "../protocol/index.js";
import { envContentHash } from "./content-hash.js";
import type { AnyEnvironment } from "./types.js";

function argsJsonSchema(env: AnyEnvironment): Record<string, unknown> {
  try {
    const schema = z.toJSONSchema(env.argsSchema, { target: "draft-2020-12", io: "input", unrepresentable: "any" }) as Record<string, unknown>;
    delete schema.$schema;
    return schema;
  } catch {
    return { type: "object" };
  }
}

/** What `GET /v1/envs/{id}` publishes about an environment. */
/** The wire form of an environment's sandbox report. */
export function isolationInfo(env: AnyEnvironment): { level: string; detail: string; served: boolean } {
  const { level, detail, refusal } = env.isolation?.() ?? { level: "none", detail: "runs no client-supplied code" };
  return { level, detail, served: refusal === undefined };
}

export function envInfo(env: AnyEnvironment): EnvInfo {
  return {
    id: env.id,
    version: env.version,
    description: env.description,
    kind: env.kind,
    args_schema: argsJsonSchema(env),
    tools: env.toolDefinitions(),
    max_turns: env.maxTurns,
    max_tool_calls_per_message: env.maxToolCallsPerMessage,
    splits: { train: env.dataset.size("train"), eval: env.dataset.size("eval") },
    rubric: [
      ...env.rubric.rewards.map((r) => ({ name: r.name, weight: r.weight, group: false, ...(r.description ? { description: r.description } : {}) })),
      ...(env.rubric.groupRewards ?? []).map((r) => ({ name: r.name, weight: r.weight, group: true, ...(r.description ? { description: r.description } : {}) })),
    ],
    system_prompt: env.systemPrompt,
    answer_format: env.parser.format,
    ...(env.isolation ? { isolation: isolationInfo(env) } : {}),
    ...(env.seats
      ? {
          seats: env.seats.seats.map((s) => ({ name: s.name, description: s.description, players: [...s.players], default: s.default, trainable: s.trainable ?? true })),
          policies: Object.fromEntries(Object.entries(env.seats.policies).map(([name, p]) => [name, p.description])),
        }
      : {}),
  };
}

/** `envInfo` with the environment's content hash: what the server publishes. */
export async function describeEnv(env: AnyEnvironment): Promise<EnvInfo> {
  // The hash first: it waits for a lazily loaded dataset, whose split sizes are then known.
  const hash = await envContentHash(env);
  return { ...envInfo(env), hash };
}
