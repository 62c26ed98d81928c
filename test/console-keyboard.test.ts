import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { startNodeServer, type RunningServer } from "../src/server/node/serve.js";
import { browserOrSkip, launchChromium } from "./support/browser.js";
import { auditPage, consolePages, describeFocus, ensureConsoleBuilt, sidewaysOverflow, tabTo } from "./support/console-page.js";

/**
 * The console from the keyboard alone (Tab, Shift+Tab, Enter, Space, Escape), in Debian's
 * chromium against a real Node server: the skip link, playing reverse-text to a score,
 * opening episodes by id and from the forks list, an episode's fork tree and sampled token
 * ids, the API key prompt, and every page at phone width (390×844) without sideways
 * scrolling. Each page visited is audited (one h1, landmarks, named controls, visible focus).
 * EDGEGYM_SCREENSHOTS=DIR keeps the
 * screenshots docs/console.md shows.
 */
const browserReady = browserOrSkip();
const shots = process.env.EDGEGYM_SCREENSHOTS ? resolve(process.env.EDGEGYM_SCREENSHOTS) : mkdtempSync(join(tmpdir(), "edgegym-shots-"));
mkdirSync(shots, { recursive: true });

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- test bodies are walked freely

describe.skipIf(!browserReady)("web console from the keyboard", () => {
  let server: RunningServer;
  let browser: Browser;
  const pages = consolePages(() => browser);

  beforeAll(async () => {
    ensureConsoleBuilt();
    server = await startNodeServer({ port: 0, host: "127.0.0.1", dbPath: ":memory:", reapIntervalMs: 0 });
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });
  afterEach(() => pages.check());

  const open = (path: string, viewport?: { width: number; height: number }) => pages.open(server.url, path, viewport);
  const shot = (page: Page, name: string) => page.screenshot({ path: join(shots, `${name}.png`) });
  const call = async (method: string, path: string, body?: unknown): Promise<Json> => {
    const res = await fetch(`${server.url}${path}`, { method, headers: body === undefined ? {} : { "Content-Type": "application/json" }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const json = (await res.json()) as Json;
    expect(res.ok, `${method} ${path}: ${JSON.stringify(json)}`).toBe(true);
    return json;
  };
  const h1 = (page: Page) => page.getByRole("heading", { level: 1 });
  const expectAudited = async (page: Page, where: string) => expect(await auditPage(page), where).toEqual([]);

  /** A tic-tac-toe episode with sampled tokens at turn 1, forked three ways after it; one fork played on and scored. */
  async function episodeWithForks(): Promise<{ parent: string; forks: string[]; scored: string }> {
    const parent = (await call("POST", "/v1/envs/tic-tac-toe/episodes", { seed: 11, args: { opponent: "random" } })).episode_id as string;
    const sampled = { token_ids: [9906, 11, 1917], logprobs: [-0.25, -1.5, -0.01], template_hash: "sha256:console-test" };
    const first = await call("POST", `/v1/episodes/${parent}/step`, { turn: 0, message: { role: "assistant", content: "<move>5</move>" }, sampled });
    const forks = ((await call("POST", `/v1/episodes/${parent}/fork`, { turn: 1, n: 3 })).episodes as { episode_id: string }[]).map((e) => e.episode_id);
    const taken = new Set([5, ...[...JSON.stringify(first.messages).matchAll(/(?:taking cell|played) (\d)/g)].map((m) => Number(m[1]))]);
    const free = [1, 2, 3, 4, 6, 7, 8, 9].find((c) => !taken.has(c));
    const scored = forks[0] as string;
    await call("POST", `/v1/episodes/${scored}/step`, { turn: 1, message: { role: "assistant", content: `<move>${free}</move>` } });
    await call("POST", `/v1/episodes/${scored}/score`);
    return { parent, forks, scored };
  }

  it("skips to the content, plays reverse-text to a score and opens its episode, with the keyboard alone", async () => {
    const page = await open("/ui/");
    await h1(page).filter({ hasText: "Environments" }).waitFor();
    await expectAudited(page, "environments");
    // The first Tab reaches the skip link, shown on focus; Enter moves the focus into main.
    const skip = page.getByRole("link", { name: "Skip to content" });
    await tabTo(page, skip);
    expect(await skip.evaluate((el) => el.getBoundingClientRect().left >= 0)).toBe(true);
    await page.keyboard.press("Enter");
    expect(await describeFocus(page)).toMatch(/^<main#main>/);

    await tabTo(page, page.getByRole("link", { name: "reverse-text", exact: true }));
    await page.keyboard.press("Enter");
    await h1(page).filter({ hasText: "reverse-text" }).waitFor();
    // Polled: the focus moves in an effect after the route's render, which under a loaded
    // CI machine can land a frame after the new page's heading shows.
    await expect.poll(() => describeFocus(page), { message: "a navigation puts the focus at the new page's content", timeout: 5000 }).toMatch(/^<main#main>/);
    await expectAudited(page, "environment");
    // Examples page with the keyboard: the pager keeps the focus while the next page loads.
    const next = page.getByRole("button", { name: "Next" });
    await tabTo(page, next);
    await page.keyboard.press("Enter");
    await expect.poll(() => page.getByText(/^6–10 of/).count()).toBe(1);
    expect(await next.evaluate((el) => el === document.activeElement)).toBe(true);
    await tabTo(page, page.getByRole("button", { name: "Start episode" }), { back: true });
    await page.keyboard.press("Space");

    const box = page.getByRole("textbox", { name: "Assistant message" });
    await box.waitFor();
    await expectAudited(page, "play");
    const prompt = (await page.locator(".msg-user .msg-text").first().textContent()) ?? "";
    await tabTo(page, box);
    await page.keyboard.type(`<answer>${[...prompt].reverse().join("")}</answer>`);
    await page.keyboard.press("Control+Enter");
    await expect.poll(() => page.getByTestId("status").textContent()).toContain("done");
    // The composer is gone with the episode's end: the focus went on to Score.
    await expect.poll(() => describeFocus(page)).toMatch(/^<button> Score/);
    await page.keyboard.press("Space");
    await expect.poll(async () => Number(await page.getByTestId("reward").textContent())).toBeCloseTo(1.2, 5);
    // The curl snippet opens from the keyboard too.
    await tabTo(page, page.locator("summary", { hasText: "curl" }));
    await page.keyboard.press("Enter");
    await page.getByTestId("curl").waitFor({ state: "visible" });

    await tabTo(page, page.getByTestId("episode-id"), { back: true });
    await page.keyboard.press("Enter");
    await h1(page).filter({ hasText: "Episode" }).waitFor();
    await expect.poll(() => page.getByTestId("reward").textContent()).toBe("1.200");
    await expectAudited(page, "episode");
    // Back to the environments through the main navigation.
    await tabTo(page, page.getByRole("navigation", { name: "main" }).getByRole("link", { name: "Environments" }), { back: true });
    await page.keyboard.press("Enter");
    await h1(page).filter({ hasText: "Environments" }).waitFor();
  }, 90_000);

  it("shows an episode's forks and sampled token ids, and walks the fork tree from the keyboard", async () => {
    const { parent, forks, scored } = await episodeWithForks();
    const page = await open("/ui/episodes");
    await expectAudited(page, "episodes");
    await tabTo(page, page.getByLabel("Episode id"));
    await page.keyboard.type(parent);
    await page.keyboard.press("Enter");
    await h1(page).filter({ hasText: parent }).waitFor();
    await expect.poll(() => page.locator("[data-testid=forks] tbody tr").count()).toBe(3);
    await expectAudited(page, "episode with forks");
    const rows = await page.locator("[data-testid=forks] tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent)));
    expect(rows.map((r) => r[0]).sort()).toEqual([...forks].sort());
    expect(rows.find((r) => r[0] === scored)).toEqual([scored, "1", "2", "done", expect.stringMatching(/^\d\.\d{3}$/)]);
    expect(rows.filter((r) => r[0] !== scored).every((r) => r[1] === "1" && r[2] === "1" && r[3] === "active" && r[4] === "not scored")).toBe(true);
    expect(await page.getByTestId("parent").count()).toBe(0);

    // The sampled token ids of turn 1, opened with Enter.
    const tokens = page.locator("summary", { hasText: "turn 1: 3 token ids" });
    await tabTo(page, tokens);
    await page.keyboard.press("Enter");
    await expect.poll(() => page.getByText("[9906,11,1917]").isVisible()).toBe(true);
    await page.getByRole("heading", { name: "Sampled tokens" }).evaluate((el) => el.scrollIntoView({ block: "start" }));
    await shot(page, "episode-forks");

    await tabTo(page, page.getByRole("link", { name: scored }));
    await page.keyboard.press("Enter");
    await h1(page).filter({ hasText: scored }).waitFor();
    await expect.poll(() => page.getByTestId("parent").textContent()).toMatch(new RegExp(`forked from ${parent} after turn 1`));
    // The fork's transcript starts with the parent's: its turn 1 tokens come with it.
    await expect.poll(() => page.locator("summary", { hasText: "turn 1: 3 token ids" }).count()).toBe(1);
    expect(await page.locator("[data-testid=forks]").count(), "a fork with no forks of its own shows no list").toBe(0);
    await expectAudited(page, "fork");
    await shot(page, "episode-fork");
    await tabTo(page, page.getByTestId("parent").getByRole("link", { name: parent }), { back: true });
    await page.keyboard.press("Enter");
    await h1(page).filter({ hasText: parent }).waitFor();
  }, 60_000);

  it("fits a phone (390×844) on every page without sideways scrolling", async () => {
    const { parent, scored } = await episodeWithForks();
    const pagesToVisit: [string, string][] = [
      ["/ui/", "Environments"],
      ["/ui/envs/tic-tac-toe", "tic-tac-toe"],
      ["/ui/envs/tool-math", "tool-math"],
      ["/ui/play/reverse-text", "reverse-text"],
      ["/ui/episodes", "Episodes"],
      [`/ui/episodes/${parent}`, parent],
      [`/ui/episodes/${scored}`, scored],
      ["/ui/evals", "Evaluations"],
    ];
    const page = await open("/ui/", { width: 390, height: 844 });
    for (const [path, title] of pagesToVisit) {
      await page.goto(`${server.url}${path}`);
      await h1(page).filter({ hasText: title }).waitFor();
      if (path.startsWith("/ui/episodes/ep_")) await page.locator(".msg").first().waitFor();
      if (path === `/ui/episodes/${parent}`) {
        await page.locator("[data-testid=forks]").waitFor();
        await page.getByRole("heading", { name: "Forks" }).evaluate((el) => el.scrollIntoView({ block: "start" }));
        await shot(page, "episode-forks-phone");
      }
      expect(await sidewaysOverflow(page), `${path} at 390 px`).toBeLessThanOrEqual(0);
      expect(await auditPage(page), path).toEqual([]);
    }
  }, 60_000);

  it("asks for an API key with the focus in the field; Enter uses it, Escape dismisses the prompt", async () => {
    const keyed = await startNodeServer({ port: 0, host: "127.0.0.1", dbPath: ":memory:", reapIntervalMs: 0, config: { apiKeys: ["alice:sk-alice-keyboard-0123"] } });
    try {
      const page = await pages.open(keyed.url, "/ui/");
      const field = page.getByLabel("This server needs an API key");
      await field.waitFor();
      await expect.poll(() => describeFocus(page)).toMatch(/^<input#api-key>/);
      await expectAudited(page, "key prompt");
      await page.keyboard.type("sk-alice-keyboard-0123");
      await page.keyboard.press("Enter");
      await page.getByRole("link", { name: "reverse-text", exact: true }).waitFor();
      expect(await field.count()).toBe(0);

      const other = await pages.open(keyed.url, "/ui/episodes/ep_someone");
      await other.getByLabel("This server needs an API key").waitFor();
      await other.keyboard.press("Escape");
      await expect.poll(() => other.getByLabel("This server needs an API key").count()).toBe(0);
      expect(await describeFocus(other)).toMatch(/^<main#main>/);
    } finally {
      // The pages first: a fetch they still have open on the keyed server would hold its close for the grace.
      await pages.check();
      await keyed.close();
    }
  }, 60_000);
});
