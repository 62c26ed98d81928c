import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "trainer-adapter/", ".wrangler/", "openapi/", "drizzle/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      // Layering from DESIGN.md: protocol imports zod only; envs never import a server, database or runtime module.
      "no-restricted-imports": "off",
    },
  },
  {
    files: ["src/protocol/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [{ regex: "^(?!zod$)(?!\\.).*", message: "src/protocol imports zod only" }, { group: ["../envs/*", "../server/*", "../envs", "../server"], message: "src/protocol imports zod only" }] }],
    },
  },
  {
    files: ["src/envs/**/*.ts"],
    ignores: ["src/envs/**/*.test.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: [{ group: ["hono", "hono/*", "@hono/*", "drizzle-orm", "drizzle-orm/*", "better-sqlite3", "node:*", "../server/*", "../../server/*"], message: "src/envs is pure TypeScript: no server, database or runtime modules" }] },
      ],
    },
  },
  {
    // Node-only parts of src/envs (the Pyodide python tool, the file reader) live in *.node.ts
    // files that only the Node entry imports: node:* is allowed there, the server still is not.
    files: ["src/envs/**/*.node.ts"],
    ignores: ["src/envs/**/*.test.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: [{ group: ["hono", "hono/*", "@hono/*", "drizzle-orm", "drizzle-orm/*", "better-sqlite3", "../server/*", "../../server/*"], message: "Node-only envs code may use node:*, never the server or database" }] },
      ],
    },
  },
  {
    // The evaluator's core runs wherever fetch does (Node, Workers): its file and terminal code lives in src/eval/node.
    files: ["src/eval/**/*.ts"],
    ignores: ["src/eval/node/**", "src/eval/**/*.test.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: [{ group: ["hono", "hono/*", "@hono/*", "drizzle-orm", "drizzle-orm/*", "better-sqlite3", "node:*", "../server/*", "cli-progress", "hyparquet-writer"], message: "src/eval's core is runtime-neutral: Node-only code goes in src/eval/node" }] },
      ],
    },
  },
);
