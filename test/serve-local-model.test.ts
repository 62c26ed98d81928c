import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EvalRollout } from "../src/protocol/index.js";
// results.jsonl rows carry verifiers 0.3's nested timing beside edgegym's flat one (docs/eval.md).
import { withFlatTiming } from "../src/eval/vf-formats.js";
import { ensureBuiltDist, ROOT } from "./support/built-dist.js";
import { freePort } from "./support/child-server.js";

/**
 * The README's first evaluation, with no API key: `npm run model:local` (SmolLM2-135M on
 * llama.cpp) and the `edgegym eval` command printed under it, run as printed but for the
 * port and the output directory. Needs what scripts/fetch-test-model.sh fetches (npm test
 * fetches it first); skipped with a note without it, failed when EDGEGYM_REQUIRE_LLAMA=1.
 */
const modelPath = process.env.EDGEGYM_TEST_MODEL ?? join(process.env.EDGEGYM_TEST_MODEL_DIR ?? join(homedir(), ".cache", "edgegym", "test-models"), "SmolLM2-135M-Instruct.Q4_1.gguf");
const ready = existsSync(modelPath) && existsSync(join(ROOT, "test/llama-server/node_modules/@node-llama-cpp/linux-x64/package.json"));
if (!ready) {
  const why = "npm run model:local test: run bash scripts/fetch-test-model.sh first";
  if (process.env.EDGEGYM_REQUIRE_LLAMA === "1") throw new Error(why);
  console.warn(`${why} (skipping)`);
}

const out = mkdtempSync(join(tmpdir(), "edgegym-local-model-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe.skipIf(!ready)("npm run model:local, then the README's first eval", () => {
  it("serves SmolLM2 on an OpenAI-compatible endpoint that edgegym eval completes every rollout against", async () => {
    ensureBuiltDist();
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    expect(readme).toContain("npm run model:local");
    const command = readme.split("\n").find((l) => l.startsWith("node bin/edgegym.js eval ") && l.includes("http://127.0.0.1:8080/v1"));
    expect(command, "the README's local-model eval command").toBeDefined();

    const port = await freePort();
    const server = spawn("npm", ["run", "--silent", "model:local", "--", "--port", String(port)], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let log = "";
    server.stdout.on("data", (c: Buffer) => (log += c.toString()));
    server.stderr.on("data", (c: Buffer) => (log += c.toString()));
    try {
      await new Promise<void>((done, fail) => {
        const timer = setTimeout(() => fail(new Error(`model:local did not start:\n${log}`)), 90_000);
        const check = setInterval(() => {
          if (log.includes(`listening on http://127.0.0.1:${port}/v1`)) {
            clearTimeout(timer);
            clearInterval(check);
            done();
          }
        }, 100);
      });
      const args = (command as string).replace("http://127.0.0.1:8080/v1", `http://127.0.0.1:${port}/v1`).split(/\s+/).slice(1);
      const run = spawn(process.execPath, [...args, "-o", out], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
      let stderr = "";
      run.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
      const code = await new Promise<number | null>((done) => run.on("exit", done));
      expect(code, stderr).toBe(0);
      const parent = join(out, "evals", "reverse-text--smollm2-135m");
      const rows = readFileSync(join(parent, readdirSync(parent)[0] as string, "results.jsonl"), "utf8").trim().split("\n").map((l) => EvalRollout.parse(withFlatTiming(JSON.parse(l))));
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) {
        expect(row.error).toBeNull();
        expect(row.token_usage.output_tokens).toBeGreaterThan(0);
      }
    } finally {
      process.kill(-(server.pid as number), "SIGTERM");
    }
  }, 180_000);
});
