import { zodToOpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import type { ZodType } from "zod";
import * as protocol from "../../protocol/index.js";

let registered = false;

/**
 * The protocol names its reusable schemas with zod's own `.meta({ id })`, so it needs
 * nothing but zod. zod-to-openapi turns such an id into a shared component only for a
 * schema it has metadata of its own for; giving each named schema an empty entry makes
 * the document reference `#/components/schemas/<id>` instead of inlining copies.
 */
export function registerProtocolComponents(): void {
  if (registered) return;
  registered = true;
  for (const value of Object.values(protocol)) {
    if (value && typeof value === "object" && "meta" in value && typeof value.meta === "function") {
      const schema = value as ZodType;
      const meta = schema.meta() as { id?: string } | undefined;
      if (meta?.id && !zodToOpenAPIRegistry.has(schema)) zodToOpenAPIRegistry.add(schema, {});
    }
  }
}
