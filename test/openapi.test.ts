import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { buildOpenApiDocument } from "../src/server/openapi/build.js";

describe("openapi/openapi.json", () => {
  it("matches the document generated from the route schemas (run `npm run openapi` when this fails)", () => {
    const checkedIn = JSON.parse(readFileSync(new URL("../openapi/openapi.json", import.meta.url), "utf8"));
    expect(checkedIn).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument())));
  });

  it("documents every route with a summary and every error response with the shared schema", () => {
    const doc = buildOpenApiDocument();
    for (const [path, item] of Object.entries(doc.paths ?? {})) {
      for (const [method, op] of Object.entries(item as Record<string, { summary?: string; responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>)) {
        expect(op.summary, `${method} ${path}`).toBeTruthy();
        for (const [status, response] of Object.entries(op.responses)) {
          // A harness episode's model endpoint answers in its agent's wire's shape (OpenAI's or Anthropic's), which the agent's SDK parses.
          const shared = path.startsWith("/model/") ? "ModelError" : "Error";
          if (Number(status) >= 400) expect(response.content?.["application/json"]?.schema, `${method} ${path} ${status}`).toEqual({ $ref: `#/components/schemas/${shared}` });
        }
      }
    }
  });

  it("names every operation with a unique camelCase operationId", () => {
    const ids: string[] = [];
    for (const [path, item] of Object.entries(buildOpenApiDocument().paths ?? {})) {
      for (const [method, op] of Object.entries(item as Record<string, { operationId?: string }>)) {
        expect(op.operationId, `${method} ${path}`).toMatch(/^[a-z][A-Za-z]+$/);
        ids.push(op.operationId ?? "");
      }
    }
    expect(ids.length).toBeGreaterThan(0);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("reports the package version as info.version", () => {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string };
    expect(buildOpenApiDocument().info.version).toBe(pkg.version);
  });

  it("describes every property of every component schema", () => {
    const schemas = (buildOpenApiDocument().components?.schemas ?? {}) as Record<string, Record<string, unknown>>;
    // A property that is only a reference (or a reference or null) takes the referenced
    // schema's description: zod-to-openapi inlines a named schema given one of its own.
    const refTarget = (prop: Record<string, unknown>): Record<string, unknown> | undefined => {
      const branches = (prop.anyOf ?? prop.oneOf ?? [prop]) as Record<string, unknown>[];
      const refs = branches.filter((b) => typeof b.$ref === "string");
      const rest = branches.filter((b) => typeof b.$ref !== "string");
      if (refs.length !== 1 || !rest.every((b) => b.type === "null")) return undefined;
      return schemas[String(refs[0]?.$ref).replace("#/components/schemas/", "")];
    };
    const undescribed: string[] = [];
    for (const [name, schema] of Object.entries(schemas)) {
      for (const [field, prop] of Object.entries((schema.properties ?? {}) as Record<string, Record<string, unknown>>)) {
        const description = prop.description ?? refTarget(prop)?.description;
        if (typeof description !== "string" || description.trim() === "") undescribed.push(`${name}.${field}`);
      }
    }
    expect(undescribed).toEqual([]);
  });

  it("gives every integer field a minimum and a maximum", () => {
    const unbounded: string[] = [];
    const visit = (node: unknown, where: string): void => {
      if (Array.isArray(node)) return node.forEach((n, i) => visit(n, `${where}/${i}`));
      if (node === null || typeof node !== "object") return;
      const schema = node as Record<string, unknown>;
      const type = schema.type;
      if (type === "integer" || (Array.isArray(type) && type.includes("integer"))) {
        const low = schema.minimum ?? schema.exclusiveMinimum;
        const high = schema.maximum ?? schema.exclusiveMaximum;
        if (typeof low !== "number" || typeof high !== "number" || high > Number.MAX_SAFE_INTEGER || low < -Number.MAX_SAFE_INTEGER) unbounded.push(where);
      }
      for (const [key, value] of Object.entries(schema)) visit(value, `${where}/${key}`);
    };
    visit(buildOpenApiDocument(), "#");
    expect(unbounded).toEqual([]);
  });

  it("says /health and a keyless server need no key", async () => {
    const { inProcessApp } = await import("./support/in-process.js");
    const open = inProcessApp();
    const keyed = inProcessApp({ config: { apiKeys: ["k"] } });
    const adminOnly = inProcessApp({ config: { adminApiKeys: ["admin"] } });
    expect((await adminOnly.call("GET", "/openapi.json")).json.security).toEqual([{ bearerAuth: [] }]);
    adminOnly.close();
    const openDoc = (await open.call("GET", "/openapi.json")).json;
    const keyedDoc = (await keyed.call("GET", "/openapi.json")).json;
    expect(openDoc.security).toEqual([]);
    expect(keyedDoc.security).toEqual([{ bearerAuth: [] }]);
    expect(keyedDoc.paths["/health"].get.security).toEqual([]);
    open.close();
    keyed.close();
  });
});
