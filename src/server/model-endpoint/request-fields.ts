import { TranslationError } from "./translation-error.js";

/**
 * Readers for the fields of an agent's request body, which is untrusted JSON. Each throws
 * a {@link TranslationError} naming the field's path, so a harness with a bug gets a 400
 * that points at it instead of an upstream error about a request it never sent.
 */

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function objectAt(value: unknown, path: string): JsonObject {
  if (!isObject(value)) throw new TranslationError(`${path} must be an object`);
  return value;
}

export function arrayAt(value: unknown, path: string): unknown[] {
  if (!Array.isArray(value)) throw new TranslationError(`${path} must be an array`);
  return value;
}

export function stringAt(value: unknown, path: string): string {
  if (typeof value !== "string") throw new TranslationError(`${path} must be a string`);
  return value;
}

/** JSON null counts as absent: SDKs serialize unset optional fields either way. */
export function optionalString(value: unknown, path: string): string | undefined {
  return value === undefined || value === null ? undefined : stringAt(value, path);
}

export function optionalNumber(value: unknown, path: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value)) throw new TranslationError(`${path} must be a number`);
  return value;
}

export function optionalBoolean(value: unknown, path: string): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "boolean") throw new TranslationError(`${path} must be a boolean`);
  return value;
}

/** A JSON Schema object (a tool's parameters), passed upstream as is. */
export function optionalSchema(value: unknown, path: string): JsonObject | undefined {
  return value === undefined || value === null ? undefined : objectAt(value, path);
}

/**
 * A client-defined function tool in Chat Completions' shape, from the fields both the
 * Anthropic and the Responses wires spell alike (`name`, `description`, `strict`); only the
 * schema's field differs (`input_schema` there, `parameters` here).
 */
export function functionTool(tool: JsonObject, path: string, schemaField: "input_schema" | "parameters"): { type: "function"; function: { name: string; description?: string; parameters?: JsonObject; strict?: boolean } } {
  const description = optionalString(tool.description, `${path}.description`);
  const parameters = optionalSchema(tool[schemaField], `${path}.${schemaField}`);
  const strict = optionalBoolean(tool.strict, `${path}.strict`);
  return {
    type: "function",
    function: {
      name: stringAt(tool.name, `${path}.name`),
      ...(description !== undefined ? { description } : {}),
      ...(parameters !== undefined ? { parameters } : {}),
      ...(strict !== undefined ? { strict } : {}),
    },
  };
}
