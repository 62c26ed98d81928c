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
});
