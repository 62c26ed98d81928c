import { spawn, type ChildProcess } from "node:child_process";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packageEntry, resolveEnvSpecifier } from "../src/envs/load-env-modules.node.js";
import { ensureBuiltDist, ROOT } from "./support/built-dist.js";

/**
 * An environment package as an author publishes one: its own package.json and entry,
 * importing edgegym and zod by name. The test installs it the way npm would lay it out
 * (dependencies in node_modules, here linked to this checkout) and serves it with the
 * real CLI.
 */
const PACKAGE_JSON = {
  name: "edgegym-env-countdown",
  version: "0.2.0",
  type: "module",
  exports: { ".": { import: "./lib/index.js" } },
  peerDependencies: { edgegym: "*", zod: "^4" },
};

const ENTRY = `
import { z } from "zod";
import { defineRubric, rowsDataset, multiTurnEnv, XmlParser } from "edgegym";

const Args = z.object({ start: z.number().int().min(1).max(20).default(3) }).strict();

/** Count down from args.start; the rubric checks against the same args. */
export const countdown = multiTurnEnv({
  id: "countdown",
  version: "0.2.0",
  description: "Count down to 1.",
  argsSchema: Args,
  parser: new XmlParser({ fields: ["answer"] }),
  dataset: rowsDataset({ train: [{ prompt: "Answer inside <answer> tags." }] }),
  maxTurns: 2,
  setup: (_row, { args }) => ({ state: {}, messages: [{ role: "user", content: "Count down from " + args.start + "." }] }),
  respond: (state) => ({ state, messages: [{ role: "user", content: "Again?" }] }),
  rubric: defineRubric([
    {
      name: "correct",
      weight: 1,
      fn: ({ completion, parser, args }) => {
        const want = Array.from({ length: args.start }, (_, i) => args.start - i).join(" ");
        return Number(parser.parseAnswer(completion) === want);
      },
    },
  ]),
});
`;

let dir: string;
let server: ChildProcess | undefined;
let url = "";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked by the assertions
async function json(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(url + path, { method, headers: body === undefined ? {} : { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

beforeAll(async () => {
  ensureBuiltDist();
  dir = await mkdtemp(join(tmpdir(), "edgegym-env-pkg-"));
  const pkg = join(dir, "countdown-env");
  await mkdir(join(pkg, "lib"), { recursive: true });
  await writeFile(join(pkg, "package.json"), JSON.stringify(PACKAGE_JSON, null, 2));
  await writeFile(join(pkg, "lib", "index.js"), ENTRY);
  await mkdir(join(dir, "node_modules"));
  await symlink(ROOT, join(dir, "node_modules", "edgegym"), "dir");
  await symlink(join(ROOT, "node_modules", "zod"), join(dir, "node_modules", "zod"), "dir");
  await symlink(pkg, join(dir, "node_modules", "edgegym-env-countdown"), "dir");

  server = spawn(process.execPath, [join(ROOT, "bin", "edgegym.js"), "serve", "--port", "0", "--db", ":memory:", "--env", "./countdown-env"], {
    cwd: dir,
    env: { ...process.env, EDGEGYM_REAP_INTERVAL_SECONDS: "0" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  url = await new Promise<string>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`server did not start: ${out}`)), 20_000);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1] as string);
      }
    };
    server?.stdout?.on("data", onData);
    server?.stderr?.on("data", onData);
    server?.on("exit", (code) => reject(new Error(`server exited with ${code}: ${out}`)));
  });
});

afterAll(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((resolve) => server?.once("exit", resolve));
    server.kill("SIGTERM");
    await exited;
  }
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("an environment package loaded with --env", () => {
  it("is served beside the built-ins", async () => {
    const list = await json("GET", "/v1/envs");
    expect(list.body.envs.map((e: { id: string }) => e.id)).toContain("countdown");
    const info = await json("GET", "/v1/envs/countdown");
    expect(info.body).toMatchObject({ version: "0.2.0", kind: "multi_turn", args_schema: { properties: { start: { type: "integer", default: 3 } } } });
  });

  it("takes its env args at reset, in setup and in the rubric", async () => {
    const reset = await json("POST", "/v1/envs/countdown/episodes", { args: { start: 5 } });
    expect(reset.status).toBe(201);
    expect(reset.body.messages.at(-1)).toEqual({ role: "user", content: "Count down from 5." });
    const id = reset.body.episode_id;
    const step = await json("POST", `/v1/episodes/${id}/step`, { turn: 0, message: { role: "assistant", content: "<answer>5 4 3 2 1</answer>" } });
    expect(step.body).toMatchObject({ turn: 1, done: false, messages: [{ role: "user", content: "Again?" }] });
    await json("POST", `/v1/episodes/${id}/step`, { turn: 1, message: { role: "assistant", content: "<answer>5 4 3 2 1</answer>" } });
    const score = await json("POST", `/v1/episodes/${id}/score`);
    expect(score.body.score.components).toEqual([{ name: "correct", weight: 1, score: 1 }]);
  });

  it("rejects args its schema refuses", async () => {
    const bad = await json("POST", "/v1/envs/countdown/episodes", { args: { start: 99 } });
    expect(bad.status).toBe(422);
    expect(bad.body.error.code).toBe("invalid_env_args");
  });
});

describe("resolving --env specifiers", () => {
  it("finds a package folder's entry from exports, and an installed package by name from the working directory", async () => {
    const entry = join(dir, "countdown-env", "lib", "index.js");
    expect(await packageEntry(join(dir, "countdown-env"))).toBe(entry);
    expect(await resolveEnvSpecifier("./countdown-env", dir)).toBe(pathToFileURL(entry).href);
    expect(await resolveEnvSpecifier("edgegym-env-countdown", join(dir, "countdown-env", "lib"))).toBe(pathToFileURL(join(dir, "node_modules", "edgegym-env-countdown", "lib", "index.js")).href);
    expect(await resolveEnvSpecifier("./countdown-env/lib/index.js", dir)).toBe(pathToFileURL(entry).href);
    expect(await resolveEnvSpecifier("not-installed-anywhere", dir)).toBe("not-installed-anywhere");
  });

  it("falls back to main, then index.js", async () => {
    const pkg = join(dir, "plain");
    await mkdir(pkg);
    expect(await packageEntry(pkg)).toBe(join(pkg, "index.js"));
    await writeFile(join(pkg, "package.json"), JSON.stringify({ name: "plain", main: "env.js" }));
    expect(await packageEntry(pkg)).toBe(join(pkg, "env.js"));
  });
});
