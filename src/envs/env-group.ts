import { z } from "zod";
import type { ChatMessage, Split, ToolDefinition } from "../protocol/index.js";
import { openingMessages } from "./engine.js";
import { PlainParser } from "./parsers/plain-parser.js";
import type { RewardInputs, RewardSpec, Rubric, RubricRoute } from "./rubric.js";
import { executeToolCalls } from "./tools.js";
import type { AnyEnvironment, Dataset, EnvKind, Environment, Runtime, StopCondition, TaskRow } from "./types.js";

/** How the member environments' tasks are laid out in the group's splits. */
export type GroupLayout = "concat" | "interleave";

export interface EnvGroupSpec {
  id: string;
  /** Default: the members' ids and versions joined. */
  version?: string;
  description?: string;
  envs: readonly AnyEnvironment[];
  /**
   * `concat` (default): all of the first environment's tasks, then the second's…
   * `interleave`: one task of each in turn (round-robin), for mixed batches by index;
   * required when a member is procedural (infinite splits), and then all must be.
   */
  layout?: GroupLayout;
}

/** The group's episode state: which member runs the episode, and that member's own state. */
export interface EnvGroupState {
  env: string;
  /** The episode's split, to reload the member's own task row at each step. */
  split: Split;
  state: unknown;
  /** Failed tool calls of the last step, for the member's stop conditions. */
  toolErrors: number;
}

/** The keys a group adds to each task's info. */
export const ENV_ID_KEY = "env_id";
export const ENV_INDEX_KEY = "env_index";

const GroupState = z.object({ env: z.string(), split: z.enum(["train", "eval"]), state: z.unknown(), toolErrors: z.number().int().min(0) }).strict();

interface Placement {
  env: AnyEnvironment;
  index: number;
}

function groupDataset(envs: readonly AnyEnvironment[], layout: GroupLayout): Dataset & { locate(split: Split, index: number): Placement } {
  const sizes = (split: Split) => envs.map((e) => e.dataset.size(split));
  const locate = (split: Split, index: number): Placement => {
    const s = sizes(split);
    if (s.every((n) => n === null)) return { env: envs[index % envs.length] as AnyEnvironment, index: Math.floor(index / envs.length) };
    const finite = s as number[];
    if (layout === "concat") {
      let rest = index;
      for (let k = 0; k < envs.length; k++) {
        if (rest < (finite[k] as number)) return { env: envs[k] as AnyEnvironment, index: rest };
        rest -= finite[k] as number;
      }
    } else {
      // Round-robin over the members that still have rows at each depth. Between two
      // member sizes the set of live members is fixed, so whole bands are skipped at once.
      let rest = index;
      let depth = 0;
      for (const end of [...new Set(finite)].sort((a, b) => a - b)) {
        const live = envs.filter((_, k) => (finite[k] as number) > depth);
        const band = (end - depth) * live.length;
        if (rest < band) return { env: live[rest % live.length] as AnyEnvironment, index: depth + Math.floor(rest / live.length) };
        rest -= band;
        depth = end;
      }
    }
    throw new RangeError(`index ${index} is outside split "${split}" (${finite.reduce((a, b) => a + b, 0)} rows)`);
  };
  return {
    locate,
    size: (split) => {
      const s = sizes(split);
      return s.some((n) => n === null) ? null : (s as number[]).reduce((a, b) => a + b, 0);
    },
    row: async (split, index) => {
      const at = locate(split, index);
      const row = await at.env.dataset.row(split, at.index);
      // The member's system prompt and few-shot go into the prompt: the group has none of its own.
      return { prompt: openingMessages(at.env, row), answer: row.answer ?? null, info: { ...row.info, [ENV_ID_KEY]: at.env.id, [ENV_INDEX_KEY]: at.index } };
    },
  };
}

/**
 * Serves several environments as one: each task is routed to the environment it came
 * from (its info carries `env_id` and `env_index`), which sets it up, answers it with its
 * own tools and stop conditions, and scores it with its own rubric (components named
 * `<env id>/<reward>`). Members' args go under `args.envs[<env id>]`.
 *
 * @example
 * const mixed = envGroup({ id: "math-and-words", envs: [math, wordle], layout: "interleave" });
 */
export function envGroup(spec: EnvGroupSpec): Environment<{ envs: Record<string, Record<string, unknown>> }, EnvGroupState> {
  const { envs } = spec;
  if (envs.length === 0) throw new Error(`envGroup ${spec.id}: needs at least one environment`);
  const byId = new Map(envs.map((e) => [e.id, e]));
  if (byId.size !== envs.length) throw new Error(`envGroup ${spec.id}: two members share an id`);
  const layout = spec.layout ?? "concat";
  for (const split of ["train", "eval"] as const) {
    const infinite = envs.filter((e) => e.dataset.size(split) === null).length;
    if (infinite && (infinite < envs.length || layout !== "interleave")) {
      throw new Error(`envGroup ${spec.id}: procedural members need layout "interleave" and every member procedural (split ${split})`);
    }
  }
  const member = (id: string): AnyEnvironment => {
    const env = byId.get(id);
    if (!env) throw new Error(`envGroup ${spec.id}: no member "${id}"`);
    return env;
  };
  const dataset = groupDataset(envs, layout);

  const argsSchema = z
    // Each member's own schema, so a reset with bad member args fails with invalid_env_args.
    .object({ envs: z.object(Object.fromEntries(envs.map((e) => [e.id, (e.argsSchema as z.ZodType).optional()]))).strict().default({}) })
    .strict() as unknown as z.ZodType<{ envs: Record<string, Record<string, unknown>> }>;
  const memberArgs = (env: AnyEnvironment, args: unknown): unknown => env.argsSchema.parse((args as { envs?: Record<string, unknown> } | undefined)?.envs?.[env.id] ?? {});
  const memberRow = async (split: Split, info: Record<string, unknown> | undefined): Promise<{ env: AnyEnvironment; row: TaskRow; index: number }> => {
    const env = member(String(info?.[ENV_ID_KEY]));
    const index = Number(info?.[ENV_INDEX_KEY]);
    return { env, index, row: await env.dataset.row(split, index) };
  };

  // Every member's stop conditions, each firing only for its own member's episodes.
  const stopConditions: StopCondition<EnvGroupState>[] = envs.flatMap((env) =>
    env.stopConditions.map((c) => ({
      name: c.name,
      truncates: c.truncates,
      ...(c.readsHistory ? { readsHistory: true } : {}),
      ...(c.tally ? { tally: c.tally } : {}),
      check: (input) => input.state.env === env.id && c.check({ ...input, state: input.state.state, maxTurns: env.maxTurns, toolErrors: input.state.toolErrors }),
    })),
  );

  const toolDefs = new Map<string, ToolDefinition>();
  for (const env of envs) for (const def of env.toolDefinitions()) if (!toolDefs.has(def.function.name)) toolDefs.set(def.function.name, def);

  const routeInputs = (inputs: RewardInputs<EnvGroupState>): RubricRoute => {
    const env = member(String(inputs.info[ENV_ID_KEY] ?? inputs.state?.env));
    return {
      key: env.id,
      rubric: env.rubric as Rubric<unknown>,
      prefix: `${env.id}/`,
      inputs: {
        ...inputs,
        state: inputs.state?.state ?? null,
        parser: env.parser,
        args: safeArgs(env, (inputs.args as { envs?: Record<string, unknown> } | undefined)?.envs?.[env.id]),
      },
    };
  };
  const publishedRewards: RewardSpec<EnvGroupState>[] = envs.flatMap((env) =>
    env.rubric.rewards.map((r) => ({ ...r, name: `${env.id}/${r.name}`, fn: () => { throw new Error("routed: scored by the member's rubric"); } }) as RewardSpec<EnvGroupState>),
  );
  const rubric: Rubric<EnvGroupState> = {
    rewards: publishedRewards,
    groupRewards: envs.flatMap((env) => (env.rubric.groupRewards ?? []).map((r) => ({ ...r, name: `${env.id}/${r.name}`, fn: () => { throw new Error("routed"); } }))),
    route: routeInputs,
  };

  const kinds = new Set(envs.map((e) => e.kind));
  const runtimes = (["node", "worker"] as Runtime[]).filter((r) => envs.every((e) => e.runtimes.includes(r)));

  return {
    id: spec.id,
    version: spec.version ?? envs.map((e) => `${e.id}@${e.version}`).join("+"),
    description: spec.description ?? `A group of ${envs.length} environments: ${envs.map((e) => e.id).join(", ")}. Each task is answered and scored by its own environment.`,
    kind: kinds.size === 1 ? ([...kinds][0] as EnvKind) : "multi_turn",
    argsSchema,
    stateSchema: GroupState as z.ZodType<EnvGroupState>,
    dataset,
    systemPrompt: null,
    fewShot: [],
    parser: new PlainParser(),
    tools: [],
    maxTurns: Math.max(...envs.map((e) => e.maxTurns)),
    // Each member's own cap applies inside respond; this one only bounds the group's outer loop, which runs no tools.
    maxToolCallsPerMessage: Math.max(...envs.map((e) => e.maxToolCallsPerMessage)),
    stopConditions,
    setup: async (row, ctx) => {
      const { env, row: own, index } = await memberRow(ctx.split, row.info);
      const setup = await env.setup(own, { ...ctx, args: memberArgs(env, ctx.args), index });
      const out: { state: EnvGroupState; messages?: ChatMessage[] } = { state: { env: env.id, split: ctx.split, state: env.stateSchema.parse(setup.state), toolErrors: 0 } };
      if (setup.messages) out.messages = setup.messages;
      return out;
    },
    respond: async (state, message, ctx) => {
      const env = member(state.env);
      const { row } = await memberRow(state.split, ctx.task.info);
      let inner = state.state;
      const reply: ChatMessage[] = [];
      let toolErrors = 0;
      if (message.tool_calls?.length && env.tools.length) {
        const tools = await executeToolCalls(env.tools, message.tool_calls, inner, { maxCalls: env.maxToolCallsPerMessage, signal: ctx.signal });
        inner = tools.state;
        toolErrors = tools.errors;
        reply.push(...tools.messages);
      }
      const result = await env.respond(inner, message, { ...ctx, args: memberArgs(env, ctx.args), task: row, toolResults: [...reply] });
      reply.push(...(result.messages ?? []));
      const out: { state: EnvGroupState; messages: ChatMessage[]; done?: boolean; stopReason?: string } = {
        state: { env: env.id, split: state.split, state: env.stateSchema.parse(result.state), toolErrors },
        messages: reply,
      };
      if (result.done) out.done = true;
      if (result.stopReason) out.stopReason = result.stopReason;
      return out;
    },
    rubric,
    runtimes,
    // A member's respond runs inside the group's: the group reads history when any member does.
    ...(envs.some((e) => e.readsHistory) ? { readsHistory: true } : {}),
    toolDefinitions: () => [...toolDefs.values()],
    toolDefinitionsFor: (state) => {
      const env = member(state.env);
      // A member whose tools are per episode (an MCP tool environment) names them from its own state.
      return env.toolDefinitionsFor?.(state.state) ?? env.toolDefinitions();
    },
    maxTurnsFor: (state) => member(state.env).maxTurns,
    // Members that need the operator's services (judge-qa's judges) get them through the group too.
    withServices: (services) => envGroup({ ...spec, envs: envs.map((e) => e.withServices?.(services) ?? e) }),
  };
}

function safeArgs(env: AnyEnvironment, raw: unknown): unknown {
  const parsed = env.argsSchema.safeParse(raw ?? {});
  return parsed.success ? parsed.data : raw;
}
