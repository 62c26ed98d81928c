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
          if (Number(status) >= 400) expect(response.content?.["application/json"]?.schema, `${method} ${path} ${status}`).toEqual({ $ref: "#/components/schemas/Error" });
        }
      }
    }
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
