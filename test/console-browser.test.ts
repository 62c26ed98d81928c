import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { startNodeServer, type RunningServer } from "../src/server/node/serve.js";
import { browserOrSkip, launchChromium } from "./support/browser.js";
import { auditPage, consolePages, ensureConsoleBuilt, sidewaysOverflow, tabTo } from "./support/console-page.js";
import { runCli } from "./support/cli-process.js";
import { startLlamaServer, type LlamaServer } from "./support/llama.js";

/**
 * The web console in a real browser (Debian's chromium through playwright-core) against a real
 * Node server: play reverse-text and tic-tac-toe to a score, open the episode, watch an eval
 * job against the test model (SmolLM2-135M on llama.cpp) finish, compare two runs, open run
 * directories with `edgegym view`, read the offline /docs, and sign in with a key as one of two
 * tenants. Every request a page makes to anywhere but the server is blocked and fails the test.
 * EDGEGYM_SCREENSHOTS=DIR keeps the screenshots (docs/console.md shows them).
 */
const browserReady = browserOrSkip();
const modelPath = process.env.EDGEGYM_TEST_MODEL ?? join(process.env.EDGEGYM_TEST_MODEL_DIR ?? join(homedir(), ".cache", "edgegym", "test-models"), "SmolLM2-135M-Instruct.Q4_1.gguf");
const modelReady = existsSync(modelPath) && existsSync(resolve("test/llama-server/node_modules/@node-llama-cpp/linux-x64/package.json"));
if (!modelReady && browserReady) {
  const why = "console eval tests: test model or llama.cpp missing; run bash scripts/fetch-test-model.sh";
  if (process.env.EDGEGYM_REQUIRE_LLAMA === "1") throw new Error(why);
  console.warn(`${why} (skipping those)`);
}
const vf03Python = resolve("trainer-adapter/.venv-vf03/bin/python");
const vf03Ready = existsSync(resolve("trainer-adapter/.venv-vf03/.edgegym-installed"));

const shots = process.env.EDGEGYM_SCREENSHOTS ? resolve(process.env.EDGEGYM_SCREENSHOTS) : mkdtempSync(join(tmpdir(), "edgegym-shots-"));
mkdirSync(shots, { recursive: true });

describe.skipIf(!browserReady)("web console in Chromium", () => {
  let server: RunningServer;
  let llama: LlamaServer | undefined;
  let browser: Browser;
  const pages = consolePages(() => browser);
  const scratch = mkdtempSync(join(tmpdir(), "edgegym-console-"));

  beforeAll(async () => {
    ensureConsoleBuilt();
    if (modelReady) llama = await startLlamaServer(modelPath);
    const evalConfig = llama ? { evalBaseUrl: llama.baseUrl, evalModel: "smollm2-135m" } : {};
    server = await startNodeServer({ port: 0, host: "127.0.0.1", dbPath: ":memory:", reapIntervalMs: 0, config: evalConfig });
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    llama?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });
  // Every request off the server is blocked and recorded, as is every error in a page: both must be empty.
  afterEach(() => pages.check());

  const open = (path: string, origin = server.url, viewport = { width: 1280, height: 800 }): Promise<Page> => pages.open(origin, path, viewport);
  const shot = (page: Page, name: string) => page.screenshot({ path: join(shots, `${name}.png`) });

  it("plays reverse-text to a score from the keyboard, and the copied curl replays it", async () => {
    const page = await open("/ui/");
    await page.getByRole("link", { name: "reverse-text", exact: true }).click();
    await page.getByRole("button", { name: "Start episode" }).click();
    const prompt = (await page.locator(".msg-user .msg-text").first().textContent()) ?? "";
    expect(prompt.length).toBeGreaterThan(10);
    const box = page.getByRole("textbox", { name: "Assistant message" });
    await box.focus();
    await page.keyboard.type(`<answer>${[...prompt].reverse().join("")}</answer>`);
    await page.keyboard.press("Control+Enter");
    await expect.poll(() => page.getByTestId("status").textContent()).toContain("done");
    await page.getByRole("button", { name: "Score" }).focus();
    await page.keyboard.press("Enter");
    await expect.poll(async () => Number(await page.getByTestId("reward").textContent())).toBeCloseTo(1.2, 5);
    await expect.poll(() => page.locator(".score tbody tr").count()).toBe(2);
    await shot(page, "play-reverse-text");

    const curl = (await page.getByTestId("curl").textContent()) ?? "";
    expect(curl).toContain(`${server.url}/v1/envs/reverse-text/episodes`);
    expect(await page.getByTestId("python").textContent()).toContain("client.step(episode.episode_id, turn, ");
    // The snippet is what was done: run as printed, it replays the episode to the same reward.
    // Asynchronously: the server answering it runs in this process.
    const { stdout: replay } = await promisify(execFile)("bash", ["-c", `set -euo pipefail\n${curl}`], { encoding: "utf8", timeout: 30_000 });
    // Its last command prints the score (`jq .score`), pretty-printed.
    const score = JSON.parse(replay.slice(replay.lastIndexOf('{\n  "reward"'))) as { reward: number };
    expect(score.reward).toBeCloseTo(1.2, 5);

    await page.getByTestId("episode-id").click();
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toContain("Episode");
    await expect.poll(() => page.locator(".msg").count()).toBe(3);
    await expect.poll(() => page.locator(".msg-head").nth(2).textContent()).toContain("turn 1");
    await expect.poll(() => page.getByTestId("reward").textContent()).toBe("1.200");
    await shot(page, "episode");
  }, 60_000);

  it("plays tic-tac-toe against the random opponent (args form) to a score, at phone width", async () => {
    const page = await open("/ui/envs/tic-tac-toe", server.url, { width: 390, height: 844 });
    await page.getByLabel("opponent").selectOption("random");
    await page.getByRole("button", { name: "Start episode" }).click();
    for (let move = 0; move < 6; move++) {
      await page.locator(".msg-user").last().waitFor();
      if ((await page.getByTestId("status").textContent())?.startsWith("done")) break;
      const board = (await page.locator(".msg-user .msg-text").last().textContent()) ?? "";
      const free = board
        .split("\n")
        .filter((l) => l.includes("|"))
        .join(" ")
        .match(/[1-9]/);
      expect(free, board).not.toBeNull();
      const turn = await page.getByTestId("turn").textContent();
      await page.getByRole("textbox", { name: "Assistant message" }).fill(`<move>${free?.[0]}</move>`);
      await page.getByRole("button", { name: "Send" }).click();
      await expect.poll(() => page.getByTestId("turn").textContent()).not.toBe(turn);
    }
    await expect.poll(() => page.getByTestId("status").textContent()).toContain("done");
    await page.getByRole("button", { name: "Score" }).click();
    // The score arrives with a request after the click: wait for its table before reading it.
    await expect.poll(() => page.locator(".score td").first().textContent()).toBe("outcome");
    const reward = Number(await page.getByTestId("reward").textContent());
    expect([0, 0.5, 1].some((r) => Math.abs(reward - (r + 0.1)) < 1e-9), String(reward)).toBe(true);
    expect(await page.locator(".score td").first().textContent()).toBe("outcome");
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow, "no sideways scrolling at phone width").toBeLessThanOrEqual(0);
    await shot(page, "play-tic-tac-toe-phone");
  }, 60_000);

  it("serves /docs offline: the reference renders from this server's files alone", async () => {
    const page = await open("/docs");
    await page.getByRole("heading", { name: /edgegym/ }).first().waitFor();
    await page.getByText("/v1/envs/{env_id}/episodes").first().waitFor();
    await shot(page, "docs");
  }, 30_000);

  const createEval = async (body: Record<string, unknown>, key?: string, url = server.url): Promise<string> => {
    const res = await fetch(`${url}/v1/evals`, { method: "POST", headers: { "Content-Type": "application/json", ...(key ? { Authorization: `Bearer ${key}` } : {}) }, body: JSON.stringify(body) });
    const json = (await res.json()) as { eval_id: string };
    expect(res.status, JSON.stringify(json)).toBe(201);
    return json.eval_id;
  };

  it.skipIf(!modelReady)("watches an eval job against SmolLM2 finish, opens its rollouts, and compares two runs", async () => {
    const first = await createEval({ env_id: "reverse-text", num_examples: 3, rollouts_per_example: 2, max_tokens: 24, temperature: 0.7, max_concurrent: 2 });
    const page = await open(`/ui/evals/${first}`);
    await expect.poll(() => page.getByTestId("eval-progress").textContent(), { timeout: 150_000 }).toMatch(/^completed · 6\/6 rollouts · 0 errors/);
    await page.getByRole("img", { name: /reward over 6 rollouts/ }).waitFor();
    await expect.poll(() => page.locator("[data-testid=examples] tbody tr").count()).toBe(3);
    expect(await auditPage(page), "eval job page").toEqual([]);
    // The best rollout of the first example, opened from the keyboard.
    await tabTo(page, page.getByRole("button", { name: /^best/ }).first());
    await page.keyboard.press("Enter");
    await expect.poll(() => page.locator(".rollout .msg-assistant").count()).toBe(1);
    await shot(page, "eval");
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await sidewaysOverflow(page), "eval job page at 390 px").toBeLessThanOrEqual(0);

    const second = await createEval({ env_id: "reverse-text", num_examples: 3, rollouts_per_example: 1, max_tokens: 24, temperature: 0, max_concurrent: 2 });
    const list = await open("/ui/evals");
    expect(await auditPage(list), "evaluations").toEqual([]);
    // Picked with Space, compared with Enter: the keyboard alone.
    for (const id of [first, second]) {
      await tabTo(list, list.getByLabel(`pick ${id}`));
      await list.keyboard.press("Space");
    }
    await tabTo(list, list.getByRole("button", { name: "Compare the two picked" }), { back: true });
    await list.keyboard.press("Enter");
    await expect.poll(() => list.locator("[data-testid=compare] tbody tr").count()).toBeGreaterThan(5);
    expect(await auditPage(list), "compare").toEqual([]);
    await shot(list, "compare");
    await list.setViewportSize({ width: 390, height: 844 });
    expect(await sidewaysOverflow(list), "compare at 390 px").toBeLessThanOrEqual(0);
  }, 240_000);

  it.skipIf(!modelReady)("edgegym view serves run directories on disk: edgegym eval's and verifiers' own", async () => {
    const out = join(scratch, "runs");
    const run = runCli(["eval", "reverse-text", "-m", "smollm2-135m", "-b", llama?.baseUrl ?? "", "-n", "2", "-r", "2", "-t", "24", "-c", "2", "-o", out]);
    expect(await run.exit, run.stderr()).toBe(0);
    const dirs = [out];
    // A run written by verifiers 0.3's own writers (as vf-eval writes it), when its venv is here.
    if (vf03Ready) {
      const vfDir = join(scratch, "vf-eval-run");
      execFileSync(vf03Python, [resolve("test/verifiers/vf_formats.py"), "write03", vfDir, "reverse-text", "org/model"], { timeout: 120_000 });
      dirs.push(vfDir);
    } else if (process.env.EDGEGYM_REQUIRE_VERIFIERS === "1") throw new Error("verifiers vf03 venv missing: bash scripts/verifiers-venv.sh vf03");
    const view = runCli(["view", ...dirs, "--port", "0"]);
    try {
      const url = (await view.waitForStdout(/listening on (http:\/\/\S+)\/ui\/evals/, 120_000))[1] as string;
      const page = await open("/ui/evals", url);
      await expect.poll(() => page.locator("tbody tr").count()).toBe(dirs.length);
      expect(await auditPage(page), "edgegym view: runs").toEqual([]);
      await tabTo(page, page.getByRole("link", { name: "run-1" }));
      await page.keyboard.press("Enter");
      await expect.poll(() => page.getByTestId("eval-progress").textContent()).toMatch(/^completed · 4\/4 rollouts/);
      await page.getByRole("img", { name: /reward over 4 rollouts/ }).waitFor();
      expect(await auditPage(page), "edgegym view: run").toEqual([]);
      await shot(page, "view");
      if (vf03Ready) {
        await page.goto(`${url}/ui/evals/run-2`);
        await expect.poll(() => page.getByTestId("eval-progress").textContent()).toMatch(/3\/3 rollouts · 1 errors/);
        // The examples table renders after the progress line (a second fetch): wait for it.
        await expect.poll(() => page.locator("[data-testid=examples] tbody tr").count()).toBe(2);
      }
    } finally {
      view.child.kill("SIGTERM");
      await view.exit;
    }
  }, 240_000);

  it.skipIf(!modelReady)("with API keys: asks for a key, keeps it out of the URL, and shows a tenant only its own jobs", async () => {
    const keyed = await startNodeServer({ port: 0, host: "127.0.0.1", dbPath: ":memory:", reapIntervalMs: 0, config: { apiKeys: ["alice:sk-alice-0123456789", "bob:sk-bob-0123456789"], evalBaseUrl: llama?.baseUrl ?? "", evalModel: "smollm2-135m" } });
    try {
      const job = { env_id: "reverse-text", num_examples: 1, rollouts_per_example: 1, max_tokens: 8 };
      const alices = await createEval(job, "sk-alice-0123456789", keyed.url);
      const bobs = await createEval(job, "sk-bob-0123456789", keyed.url);
      const page = await open("/ui/evals", keyed.url);
      await page.getByLabel("This server needs an API key").fill("sk-alice-0123456789");
      await page.keyboard.press("Enter");
      await page.getByRole("link", { name: alices }).waitFor();
      expect(await page.getByRole("link", { name: bobs }).count()).toBe(0);
      expect(page.url()).not.toContain("sk-alice");
      expect(await page.evaluate(() => [sessionStorage.getItem("edgegym.apiKey"), localStorage.length])).toEqual(["sk-alice-0123456789", 0]);
      // Bob's job by its id is not found for Alice.
      await page.goto(`${keyed.url}/ui/evals/${bobs}`);
      await expect.poll(() => page.locator(".error").first().textContent()).toContain("eval_not_found");
    } finally {
      await keyed.close();
    }
  }, 120_000);
});
