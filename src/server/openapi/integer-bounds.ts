/**
 * Writes the bounds every integer field really has into the OpenAPI document. zod 4's
 * `.int()` refuses anything outside ±(2^53−1) (a JSON number past that cannot be held
 * exactly), but the generated schema says nothing unless a field sets its own bound, so a
 * client or fuzzer could not know that 2^53 is refused. A bound a field sets itself
 * (minimum, exclusiveMinimum, …) is kept.
 */
export function withIntegerBounds<T>(doc: T): T {
  visit(doc);
  return doc;
}

function visit(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) visit(item);
    return;
  }
  if (node === null || typeof node !== "object") return;
  const schema = node as Record<string, unknown>;
  const type = schema.type;
  if (type === "integer" || (Array.isArray(type) && type.includes("integer"))) {
    if (schema.minimum === undefined && schema.exclusiveMinimum === undefined) schema.minimum = -Number.MAX_SAFE_INTEGER;
    if (schema.maximum === undefined && schema.exclusiveMaximum === undefined) schema.maximum = Number.MAX_SAFE_INTEGER;
  }
  for (const value of Object.values(schema)) visit(value);
}
