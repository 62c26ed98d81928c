import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Locator, Page } from "playwright-core";
import { startNodeServer, type RunningServer } from "../src/server/node/serve.js";
import { databaseLabel } from "../src/server/node/harbor.js";
import { browserOrSkip, launchChromium } from "./support/browser.js";
import { auditPage, consolePages, ensureConsoleBuilt, sidewaysOverflow, tabTo } from "./support/console-page.js";
import { containersWith, dockerReady } from "./support/docker.js";
import { REPO_ROOT } from "./support/node-server.js";

/*
 * The episode page of a sandboxed episode in a real browser: a harbor episode on Docker
 * (test/fixtures/harbor-tasks/count-errors) whose agent runs commands that exit non-zero,
 * print 200 lines, overrun their time limit, print past the 16 KiB cut, and print markup;
 * writes, reads and edits a file; and sends bash a number. The page shows each call as a
 * command block with its badge, collapses the long output, shows the markup as text, and
 * heads the transcript with the sandbox's facts. EDGEGYM_SCREENSHOTS=DIR keeps the screenshot (docs/console.md shows it).
 */
const ready = browserOrSkip() && dockerReady();
const FIXTURES = join(REPO_ROOT, "test/fixtures/harbor-tasks");
const shots = process.env.EDGEGYM_SCREENSHOTS ? resolve(process.env.EDGEGYM_SCREENSHOTS) : mkdtempSync(join(tmpdir(), "edgegym-shots-"));
mkdirSync(shots, { recursive: true });

const MARKUP = `<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>`;
let seq = 0;
const call = (name: string, args: Record<string, unknown>) => ({ id: `call_${++seq}`, type: "function", function: { name, arguments: JSON.stringify(args) } });

describe.skipIf(!ready)("a harbor episode on the console's episode page", () => {
  let dir: string;
  let server: RunningServer;
  let label: string;
  let browser: Browser;
  const pages = consolePages(() => browser);

  beforeAll(async () => {
    ensureConsoleBuilt();
    dir = mkdtempSync(join(tmpdir(), "edgegym-console-harbor-"));
    const dbPath = join(dir, "edgegym.db");
    server = await startNodeServer({ port: 0, host: "127.0.0.1", dbPath, reapIntervalMs: 0, harborDirs: [FIXTURES] });
    label = `edgegym.db=${databaseLabel(dbPath)}`;
    browser = await launchChromium();
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (label) for (const id of containersWith(label)) execFileSync("docker", ["rm", "-f", id], { stdio: "ignore" });
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  afterEach(() => pages.check());

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.url}${path}`, { method, headers: body === undefined ? {} : { "content-type": "application/json" }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const json = (await res.json()) as Record<string, unknown>;
    expect(res.status, JSON.stringify(json)).toBeLessThan(300);
    return json;
  };

  it("shows each call as a command block with its exit code, collapses long output, and never renders the output as markup", async () => {
    const reset = await api("POST", "/v1/envs/harbor/episodes", { args: { task: "count-errors" } });
    const id = String(reset.episode_id);
    await api("POST", `/v1/episodes/${id}/step`, {
      turn: 0,
      message: {
        role: "assistant",
        content: "Looking around first.",
        tool_calls: [
          call("bash", { command: `pwd; printf '%s\\n' '${MARKUP}'; exit 3` }),
          call("bash", { command: "seq 1 200" }),
          call("bash", { command: "echo started; sleep 5", timeout_sec: 1 }),
          call("bash", { command: "head -c 40000 /dev/zero | tr '\\0' x" }),
        ],
      },
    });
    await api("POST", `/v1/episodes/${id}/step`, {
      turn: 1,
      message: {
        role: "assistant",
        content: null,
        tool_calls: [
          call("write_file", { path: "notes.txt", content: "hello\n" }),
          call("read_file", { path: "notes.txt" }),
          call("edit_file", { path: "notes.txt", old_str: "hello", new_str: "bye" }),
          call("bash", { command: 42 }),
        ],
      },
    });
    await api("POST", `/v1/episodes/${id}/step`, { turn: 2, message: { role: "assistant", content: "Done." } });
    await api("POST", `/v1/episodes/${id}/score`);

    const page = await pages.open(server.url, `/ui/episodes/${id}`);
    const calls = page.locator(".call");
    await expect.poll(() => calls.count()).toBe(8);
    // Each tool message is shown inside the call it answers, not again on its own.
    expect(await page.locator(".msg-tool").count()).toBe(0);
    const status = (i: number) => calls.nth(i).getByTestId("call-status").textContent();
    const isOpen = (l: Locator) => l.evaluate((el) => (el as HTMLDetailsElement).open);

    const first = calls.nth(0);
    expect(await first.locator("pre.cmd").textContent()).toBe(`pwd; printf '%s\\n' '${MARKUP}'; exit 3`);
    expect(await status(0)).toBe("exit 3");
    expect(await isOpen(first.locator("details.out"))).toBe(true);
    expect(await first.locator("details.out pre").textContent()).toBe(`/app\n${MARKUP}\n`);
    // The model's markup is text: no element made from it, nothing of it run.
    expect(await page.locator(".transcript img, .transcript script").count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();

    expect(await status(1)).toBe("exit 0");
    const long = calls.nth(1).locator("details.out");
    expect(await isOpen(long)).toBe(false);
    expect(await long.locator("summary").textContent()).toContain("200 lines");

    expect(await status(2)).toBe("timed out after 1 s");
    expect(await calls.nth(2).locator(".call-arg").textContent()).toBe("timeout_sec 1");
    expect(await calls.nth(2).locator("details.out pre").textContent()).toBe("started\n");
    expect(await status(3)).toBe("exit 0");
    expect(await calls.nth(3).getByTestId("call-cut").textContent()).toBe("output cut: 16384 of 40000 bytes");

    for (const [i, name] of ["write_file", "read_file", "edit_file"].entries()) {
      expect(await calls.nth(4 + i).locator(".call-name").textContent()).toBe(name);
      expect(await calls.nth(4 + i).locator(".call-path").textContent()).toBe("notes.txt");
      expect(await status(4 + i)).toBe("done");
    }
    expect(await calls.nth(5).locator("details.out pre").textContent()).toBe("hello\n");
    expect(await calls.nth(6).locator(".call-arg").allTextContents()).toEqual(["old_str hello", "new_str bye"]);
    expect(await status(7)).toBe("error");
    expect(await calls.nth(7).locator("details.out summary").textContent()).toContain("error");

    const facts = page.getByTestId("tool-facts");
    expect(await facts.locator("h2").textContent()).toBe("Sandbox");
    const text = (await facts.textContent()) ?? "";
    for (const part of ["count-errors", "bash, read_file, write_file, edit_file", "8 (bash 5, write_file 1, read_file 1, edit_file 1)", "4 run · 1 non-zero exit · 1 timed out · 1 output cut", "tool errors1", "command time"]) expect(text).toContain(part);

    expect(await auditPage(page)).toEqual([]);
    await page.locator(".msg-assistant").first().evaluate((el) => el.scrollIntoView());
    await shot(page, "episode-harbor");
    // The collapsed output opens from the keyboard.
    await tabTo(page, long.locator("summary"), { max: 120 });
    await page.keyboard.press("Enter");
    expect(await isOpen(long)).toBe(true);

    const phone = await pages.open(server.url, `/ui/episodes/${id}`, { width: 390, height: 844 });
    await expect.poll(() => phone.locator(".call").count()).toBe(8);
    expect(await sidewaysOverflow(phone), "no sideways scrolling at phone width").toBeLessThanOrEqual(0);
  }, 240_000);

  const shot = (page: Page, name: string) => page.screenshot({ path: join(shots, `${name}.png`) });
});
