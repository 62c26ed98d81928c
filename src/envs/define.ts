import { z } from "zod";
import type { ChatMessage } from "../protocol/index.js";
import type { Parser } from "./parsers/parser.js";
import { XmlParser } from "./parsers/xml-parser.js";
import type { Rubric } from "./rubric.js";
import { maxTurnsReached, noToolCalls } from "./stop-conditions.js";
import { DEFAULT_MAX_TOOL_CALLS_PER_MESSAGE, MAX_TOOL_CALLS_PER_MESSAGE_LIMIT, toolDefinition, type Tool } from "./tools.js";
import type { Dataset, EnvKind, Environment, EpisodeResources, RespondContext, RespondResult, Runtime, SetupContext, SetupResult, StopCondition, TaskRow } from "./types.js";
import type { AssistantMessage } from "../protocol/index.js";
import { SEAT_NAME_PATTERN, CLIENT_PLAYER, type EnvSeats } from "./seats.js";

const NoArgs = z.object({}).strict();
const NoState = z.object({}).strict();

/** What an author writes; everything optional has the default named beside it. */
export interface EnvSpec<Args, State> {
  id: string;
  version: string;
  /** Versions or content hashes whose open episodes this one may continue (see `Environment.compatibleWith`). Default: none. */
  compatibleWith?: string[];
  description: string;
  kind: EnvKind;
  dataset: Dataset;
  rubric: Rubric<State>;
  /** Default: no arguments (an empty strict object). */
  argsSchema?: z.ZodType<Args>;
  /** Default: an empty object. */
  stateSchema?: z.ZodType<State>;
  /** Default: none. */
  systemPrompt?: string | null;
  fewShot?: ChatMessage[];
  /** Default: `<answer>` XML parser. */
  parser?: Parser;
  tools?: Tool<State>[];
  /** Tool calls run per assistant message (1 to 256); the rest are answered with an error. Default 16. */
  maxToolCallsPerMessage?: number;
  /** Default: 1 for single-turn, 10 otherwise. */
  maxTurns?: number;
  /** Checked in order before the built-in max-turns (and, for tool envs, no-tool-calls) conditions. */
  stopConditions?: StopCondition<State>[];
  /** Default: `{}` as state, no extra messages. */
  setup?: (row: TaskRow, ctx: SetupContext<Args>) => SetupResult<State> | Promise<SetupResult<State>>;
  /** Default: no reply. */
  respond?: (state: State, message: AssistantMessage, ctx: RespondContext<Args>) => RespondResult<State> | Promise<RespondResult<State>>;
  /** Default: both. */
  runtimes?: Runtime[];
  /** Set when `respond` reads `ctx.messages` (see Environment.readsHistory). Default false. */
  readsHistory?: boolean;
  /** Resources its episodes own outside the database (see Environment.episodeResources). */
  episodeResources?: EpisodeResources<State>;
  /** Several players (src/envs/seats.ts). A seated environment's transcript is read on each step (it builds each seat's view). */
  seats?: EnvSeats<State, Args>;
}

const ID_PATTERN = /^[a-z0-9][a-z0-9-_.]{0,63}$/;

/** The general form; prefer `singleTurnEnv`, `multiTurnEnv` or `toolEnv`. */
export function defineEnv<Args = Record<string, never>, State = Record<string, never>>(spec: EnvSpec<Args, State>): Environment<Args, State> {
  if (!ID_PATTERN.test(spec.id)) throw new Error(`environment id "${spec.id}" must match ${ID_PATTERN}`);
  const maxTurns = spec.maxTurns ?? (spec.kind === "single_turn" ? 1 : 10);
  if (!Number.isInteger(maxTurns) || maxTurns < 1) throw new Error(`${spec.id}: maxTurns must be a positive integer`);
  const maxToolCalls = spec.maxToolCallsPerMessage ?? DEFAULT_MAX_TOOL_CALLS_PER_MESSAGE;
  if (!Number.isInteger(maxToolCalls) || maxToolCalls < 1 || maxToolCalls > MAX_TOOL_CALLS_PER_MESSAGE_LIMIT) {
    throw new Error(`${spec.id}: maxToolCallsPerMessage must be an integer from 1 to ${MAX_TOOL_CALLS_PER_MESSAGE_LIMIT}`);
  }
  const tools = spec.tools ?? [];
  const builtIn: StopCondition<State>[] = [];
  if (spec.kind === "tool") builtIn.push(noToolCalls());
  builtIn.push(maxTurnsReached({ truncates: spec.kind !== "single_turn", name: spec.kind === "single_turn" ? "single_turn" : "max_turns" }));
  return {
    id: spec.id,
    version: spec.version,
    ...(spec.compatibleWith ? { compatibleWith: [...spec.compatibleWith] } : {}),
    description: spec.description,
    kind: spec.kind,
    argsSchema: spec.argsSchema ?? (NoArgs as unknown as z.ZodType<Args>),
    stateSchema: spec.stateSchema ?? (NoState as unknown as z.ZodType<State>),
    dataset: spec.dataset,
    systemPrompt: spec.systemPrompt ?? null,
    fewShot: spec.fewShot ?? [],
    parser: spec.parser ?? new XmlParser({ fields: ["answer"] }),
    tools,
    maxToolCallsPerMessage: maxToolCalls,
    maxTurns,
    stopConditions: [...(spec.stopConditions ?? []), ...builtIn],
    setup: spec.setup ?? (() => ({ state: {} as State })),
    respond: spec.respond ?? ((state) => ({ state })),
    rubric: spec.rubric,
    runtimes: spec.runtimes ?? ["node", "worker"],
    ...(spec.readsHistory ? { readsHistory: true } : {}),
    ...(spec.episodeResources ? { episodeResources: spec.episodeResources } : {}),
    ...(spec.seats ? { seats: checkSeats(spec.id, spec.seats), readsHistory: true } : {}),
    toolDefinitions: () => tools.map((t) => toolDefinition(t as Tool<never>)),
  };
}

/** A seated environment's declaration, checked once when it is defined: names, players and defaults. */
function checkSeats<State, Args>(id: string, seats: EnvSeats<State, Args>): EnvSeats<State, Args> {
  if (seats.seats.length < 1) throw new Error(`${id}: seats must name at least one seat`);
  const names = new Set<string>();
  for (const seat of seats.seats) {
    if (!SEAT_NAME_PATTERN.test(seat.name)) throw new Error(`${id}: seat name "${seat.name}" must match ${SEAT_NAME_PATTERN}`);
    if (names.has(seat.name)) throw new Error(`${id}: seat "${seat.name}" is declared twice`);
    names.add(seat.name);
    if (seat.players.length === 0) throw new Error(`${id}: seat "${seat.name}" has no players`);
    for (const player of seat.players) {
      if (player !== CLIENT_PLAYER && !Object.hasOwn(seats.policies, player)) throw new Error(`${id}: seat "${seat.name}" names policy "${player}", which the environment does not define`);
    }
    if (!seat.players.includes(seat.default)) throw new Error(`${id}: seat "${seat.name}" defaults to "${seat.default}", not one of its players`);
  }
  for (const policy of Object.keys(seats.policies)) if (!SEAT_NAME_PATTERN.test(policy)) throw new Error(`${id}: policy name "${policy}" must match ${SEAT_NAME_PATTERN}`);
  return seats;
}

type HelperSpec<Args, State> = Omit<EnvSpec<Args, State>, "kind">;

/** One prompt, one answer, scored. */
export function singleTurnEnv<Args = Record<string, never>, State = Record<string, never>>(
  spec: Omit<HelperSpec<Args, State>, "maxTurns" | "respond" | "tools">,
): Environment<Args, State> {
  return defineEnv({ ...spec, kind: "single_turn", maxTurns: 1 });
}

/** A conversation: `respond` answers each assistant message until a stop condition fires. */
export function multiTurnEnv<Args = Record<string, never>, State = Record<string, never>>(
  spec: HelperSpec<Args, State> & { respond: NonNullable<EnvSpec<Args, State>["respond"]> },
): Environment<Args, State> {
  return defineEnv({ ...spec, kind: "multi_turn" });
}

/** Tool use: the server runs the model's tool calls; a message without calls ends the episode. */
export function toolEnv<Args = Record<string, never>, State = Record<string, never>>(
  spec: HelperSpec<Args, State> & { tools: Tool<State>[] },
): Environment<Args, State> {
  return defineEnv({ ...spec, kind: "tool" });
}
