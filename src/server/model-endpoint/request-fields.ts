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
