import { z } from "zod";
import type { Split } from "../protocol/index.js";
import type { AnyEnvironment } from "./types.js";

/**
 * A content hash of what decides an environment's behaviour: `sha256:<64 hex>` over its
 * definition and its data.
 *
 * - Definition: id, version, kind, system prompt, few-shot, turn and tool-call limits, the
 *   args and state schemas (as JSON Schema), the parser (its class source and settings),
 *   the tools (schemas, hidden args and `run` source), stop conditions, `setup`,
 *   `respond`, a seated environment's seats and policies, and the rubric (every reward's name, weight and function source, group
 *   rewards, metrics, routing). Functions count by their source text
 *   (`Function.prototype.toString`, the same on Node and in workerd).
 * - Data: a finite split is hashed row by row, all of it; a procedural split is code, so
 *   its first {@link PROCEDURAL_SAMPLE} tasks stand for its generator (whose source sits in a
 *   closure no toString reaches).
 *
 * What it cannot see: helpers a function calls by name (their source is elsewhere), the
 * description (no behaviour), and the operator's services (judge URLs and keys). A change
 * there is the author's to declare by bumping `version`. The text is of the code as this
 * build runs it, so the Node build (tsc) and the Worker bundle (esbuild) of the same
 * environment hash differently; a database is only served by one of them.
 */
export type ContentHash = `sha256:${string}`;

/** Tasks of a procedural split hashed to stand for its generator. */
export const PROCEDURAL_SAMPLE = 16;

/** Bounds of the walk over an environment's objects: depth, and values visited in all. */
const MAX_DEPTH = 12;
const MAX_NODES = 200_000;
/** Row text is hashed in pieces of about this size, so a large dataset never becomes one string. */
const CHUNK_CHARS = 1 << 20;

const hex = (bytes: ArrayBuffer): string => Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");

async function sha256(text: string): Promise<string> {
  return hex(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
}

function isZodSchema(value: object): value is z.ZodType {
  return value instanceof z.ZodType || "_zod" in value;
}

function jsonSchemaOf(schema: z.ZodType): unknown {
  try {
    return z.toJSONSchema(schema, { target: "draft-2020-12", io: "input", unrepresentable: "any" });
  } catch (err) {
    // A schema JSON Schema cannot express (a transform, a custom check) still counts by its kind.
    return { unrepresentable: schema._zod?.def?.type ?? "unknown", error: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * A function's source with what compilers and formatters vary and behaviour does not:
 * comments, whitespace, semicolons, trailing commas, and the kind of quotes. Lossy on
 * purpose (a space inside a string literal is dropped too), so a tsc upgrade or a
 * reformat does not read as a new environment; it is never parsed, only hashed.
 */
export function normalizedSource(fn: unknown): string {
  return Function.prototype.toString
    .call(fn)
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/(^|[^:"'`\\])\/\/[^\n]*/g, "$1")
    .replace(/\s+/g, "")
    .replace(/;/g, "")
    .replace(/,(?=[}\])])/g, "")
    .replace(/'/g, '"');
}

/**
 * A plain JSON value that stands for `value`: functions by their source, zod schemas by
 * their JSON Schema, class instances by their class's source and own fields, object keys
 * sorted. Bounded in depth and size; cycles are cut.
 */
export function fingerprint(value: unknown): unknown {
  let nodes = 0;
  const seen = new WeakSet<object>();
  const walk = (v: unknown, depth: number): unknown => {
    if (++nodes > MAX_NODES) return "[too large]";
    if (v === null || typeof v === "string" || typeof v === "boolean") return v;
    if (typeof v === "number") return Number.isFinite(v) ? v : String(v);
    if (typeof v === "undefined") return "[undefined]";
    if (typeof v === "bigint" || typeof v === "symbol") return String(v);
    if (typeof v === "function") return { fn: normalizedSource(v) };
    if (depth > MAX_DEPTH) return "[too deep]";
    if (seen.has(v)) return "[cycle]";
    seen.add(v);
    try {
      if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1));
      if (isZodSchema(v)) return { schema: jsonSchemaOf(v) };
      if (v instanceof RegExp) return { regexp: v.source, flags: v.flags };
      if (v instanceof Map) return { map: [...v.entries()].map(([k, x]) => [walk(k, depth + 1), walk(x, depth + 1)]) };
      if (v instanceof Set) return { set: [...v.values()].map((x) => walk(x, depth + 1)) };
      const proto = Object.getPrototypeOf(v) as object | null;
      const fields: Record<string, unknown> = {};
      for (const key of Object.keys(v).sort()) fields[key] = walk((v as Record<string, unknown>)[key], depth + 1);
      if (proto === null || proto === Object.prototype) return fields;
      // A class instance: its methods live on the class, whose source holds them all.
      const ctor = (proto as { constructor?: unknown }).constructor;
      return { class: typeof ctor === "function" ? normalizedSource(ctor) : "[anonymous]", fields };
    } finally {
      seen.delete(v);
    }
  };
  return walk(value, 0);
}

/** The definition part of the hash: everything but the dataset. */
function definitionOf(env: AnyEnvironment): unknown {
  return {
    id: env.id,
    version: env.version,
    kind: env.kind,
    args_schema: jsonSchemaOf(env.argsSchema),
    state_schema: jsonSchemaOf(env.stateSchema),
    system_prompt: env.systemPrompt,
    few_shot: env.fewShot,
    max_turns: env.maxTurns,
    max_tool_calls_per_message: env.maxToolCallsPerMessage,
    parser: fingerprint(env.parser),
    tools: env.tools.map((t) => fingerprint(t)),
    tool_definitions: env.toolDefinitions(),
    stop_conditions: env.stopConditions.map((c) => fingerprint(c)),
    setup: fingerprint(env.setup),
    respond: fingerprint(env.respond),
    rubric: fingerprint(env.rubric),
    tools_for: env.toolDefinitionsFor ? fingerprint(env.toolDefinitionsFor) : null,
    max_turns_for: env.maxTurnsFor ? fingerprint(env.maxTurnsFor) : null,
    // Only on seated environments, so every one-player environment keeps the hash its episodes were stored with.
    ...(env.seats ? { seats: fingerprint(env.seats) } : {}),
  };
}

/** One split's data: every row of a finite split, the first tasks of a procedural one. */
async function splitDigest(env: AnyEnvironment, split: Split): Promise<{ size: number | null; rows: string }> {
  const size = env.dataset.size(split);
  const count = size ?? PROCEDURAL_SAMPLE;
  const chunks: string[] = [];
  let text = "";
  for (let index = 0; index < count; index++) {
    let row: unknown;
    try {
      row = await env.dataset.row(split, index);
    } catch (err) {
      // A generator that cannot make this task (it needs args) is part of what it does.
      row = { error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
    }
    text += `${JSON.stringify(fingerprint(row))}\n`;
    if (text.length >= CHUNK_CHARS) {
      chunks.push(await sha256(text));
      text = "";
    }
  }
  chunks.push(await sha256(text));
  return { size, rows: chunks.length === 1 ? (chunks[0] as string) : await sha256(chunks.join("")) };
}

async function computeHash(env: AnyEnvironment): Promise<ContentHash> {
  // A lazily loaded dataset reports no size until it has loaded: hashed then, it would
  // pass for a procedural split and hash differently from the same data once loaded.
  await env.dataset.ready?.();
  const definition = await sha256(JSON.stringify(definitionOf(env)));
  const train = await splitDigest(env, "train");
  const evalSplit = await splitDigest(env, "eval");
  return `sha256:${await sha256(JSON.stringify({ format: 1, definition, data: { train, eval: evalSplit } }))}`;
}

const cache = new WeakMap<AnyEnvironment, Promise<ContentHash>>();
/** Environments that hash as another: one bound to the operator's services hashes as the one it was bound from. */
const aliases = new WeakMap<AnyEnvironment, AnyEnvironment>();

/**
 * Makes `bound` hash as `original`. `EnvRegistry.withServices` calls it: the operator's
 * judges (their names, URLs and keys) are configuration, not the environment, and adding
 * a judge must not turn every open episode into a version mismatch.
 */
export function hashAs(bound: AnyEnvironment, original: AnyEnvironment): void {
  if (bound !== original) aliases.set(bound, aliases.get(original) ?? original);
}

/**
 * The environment's content hash, computed once per environment object per process
 * (lazily: the first reset, step or GET of it pays, in milliseconds for the built-ins).
 *
 * @example const hash = await envContentHash(reverseText); // "sha256:3f1c…"
 */
export function envContentHash(given: AnyEnvironment): Promise<ContentHash> {
  const env = aliases.get(given) ?? given;
  let hash = cache.get(env);
  if (!hash) {
    hash = computeHash(env);
    cache.set(env, hash);
    // A failure is not kept: the next request tries again.
    hash.catch(() => cache.delete(env));
  }
  return hash;
}
