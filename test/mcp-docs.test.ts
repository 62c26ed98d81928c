import { serve, type ServerType } from "@hono/node-server";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { AnyEnvironment } from "../src/envs/index.js";
import { inProcessApp } from "./support/in-process.js";
import { startNodeServer, type ChildServer } from "./support/node-server.js";

/**
 * The `// file:` blocks of docs/mcp.md, written out and run as printed: the MCP client
 * against the real Node server, the mcpToolEnv example against a real MCP server on
 * loopback. Their `edgegym` and SDK imports point at this checkout.
 */
const ROOT = join(import.meta.dirname, "..");
let dir: string;
let server: ChildServer;
let notes: ServerType;
let notesUrl: string;
const modules: Record<string, Record<string, unknown>> = {};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "edgegym-mcp-docs-"));
  const guide = await readFile(join(ROOT, "docs", "mcp.md"), "utf8");
  const blocks = [...guide.matchAll(/```ts\n\/\/ file: (\S+)\n([\s\S]*?)```/g)];
  expect(blocks.map((b) => b[1])).toEqual(["play-over-mcp.ts", "notes-env.ts"]);
  const edgegym = pathToFileURL(join(ROOT, "src", "envs", "public.ts")).href;
  for (const [, name, code] of blocks) {
    const source = (code as string)
      .replaceAll('from "edgegym"', `from "${edgegym}"`)
      .replace(/from "(@modelcontextprotocol\/sdk\/[^"]+)"/g, (_, spec: string) => `from "${import.meta.resolve(spec)}"`);
    await writeFile(join(dir, name as string), source);
    modules[name as string] = (await import(join(dir, name as string))) as Record<string, unknown>;
  }
  server = await startNodeServer({ db: join(dir, "edgegym.db"), env: { EDGEGYM_API_KEYS: "sk-docs" } });
  // The notes server the authoring example points at: one `lookup` tool, stateless.
  await new Promise<void>((resolve) => {
    notes = serve(
      {
        port: 0,
        hostname: "127.0.0.1",
        fetch: async (req) => {
          const mcp = new McpServer({ name: "notes", version: "1.0.0" });
          mcp.registerTool("lookup", { description: "Looks a note up.", inputSchema: { key: z.string() } }, ({ key }) => ({ content: [{ type: "text", text: key === "code word" ? "heron" : "no note" }] }));
          mcp.registerTool("delete_all", { description: "Not offered: allowTools leaves it out." }, () => ({ content: [] }));
          const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
          await mcp.connect(transport);
          return transport.handleRequest(req);
        },
      },
      (info) => {
        notesUrl = `http://127.0.0.1:${info.port}/mcp`;
        resolve();
      },
    );
  });
});

afterAll(async () => {
  await server?.stop();
  await new Promise<void>((resolve) => (notes ? notes.close(() => resolve()) : resolve()));
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("docs/mcp.md examples", () => {
  it("play-over-mcp.ts plays tool-math through the real server's MCP route and gets a score", async () => {
    const play = modules["play-over-mcp.ts"]?.playToolMath as (base: string, key: string) => Promise<Record<string, unknown>>;
    const out = (await play(server.url, "sk-docs")) as { task: string; tools: string[]; product: unknown; done: unknown; score: { reward: number; metrics: Record<string, number> } };
    expect(out.task).toContain("calculator");
    expect(out.tools).toEqual(["calculator", "edgegym_reply"]);
    expect(out.product).toEqual([{ type: "text", text: "45611850" }]);
    expect(out.done).toMatchObject({ turn: 2, done: true });
    expect(out.score.metrics).toMatchObject({ calculator_calls: 1, used_tool: 1 });
  });

  it("notes-env.ts offers only the allowed tool and scores a looked-up answer", async () => {
    const env = (modules["notes-env.ts"]?.notesEnv as (url: string) => AnyEnvironment & { close(): Promise<void> })(notesUrl);
    const app = inProcessApp({ envs: [env] });
    try {
      const reset = await app.call("POST", "/v1/envs/notes-lookup/episodes", { index: 0 });
      expect(reset.json.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(["lookup"]);
      const id = reset.json.episode_id as string;
      const looked = await app.call("POST", `/v1/episodes/${id}/step`, {
        turn: 0,
        message: { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "lookup", arguments: '{"key":"code word"}' } }] },
      });
      expect(looked.json.messages[0].content).toBe("heron");
      await app.call("POST", `/v1/episodes/${id}/step`, { turn: 1, message: { role: "assistant", content: "<answer>heron</answer>" } });
      expect((await app.call("POST", `/v1/episodes/${id}/score`)).json.score.reward).toBe(1);
    } finally {
      await env.close();
      app.close();
    }
  });
});
