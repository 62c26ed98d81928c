import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { startNodeServer, type RunningServer } from "../src/server/node/serve.js";
import { browserOrSkip, launchChromium } from "./support/browser.js";
import { auditPage, consolePages, ensureConsoleBuilt, sidewaysOverflow } from "./support/console-page.js";

/**
 * Seats in the console (docs/console.md), in Debian's chromium against a real Node server:
 * tic-tac-toe-2p played by hand on both seats to a finish (whose turn it is, each seat's own
 * conversation, a score per seat, the copied curl replaying it), and one seat against the
 * environment's minimax chosen in the start form. EDGEGYM_SCREENSHOTS=DIR keeps the
 * screenshots docs/console.md shows.
 */
const browserReady = browserOrSkip();
const shots = process.env.EDGEGYM_SCREENSHOTS ? resolve(process.env.EDGEGYM_SCREENSHOTS) : mkdtempSync(join(tmpdir(), "edgegym-shots-"));
mkdirSync(shots, { recursive: true });

/** The free cells of the board the last user message shows (`1 | X | 3` rows). */
async function freeCells(page: Page): Promise<number[]> {
  const board = (await page.locator(".msg-user .msg-text").last().textContent()) ?? "";
  const rows = board.split("\n").filter((l) => /^\s*[XO1-9]\s*\|/.test(l)).slice(-3);
  return rows.join(" ").match(/[1-9]/g)?.map(Number) ?? [];
}

describe.skipIf(!browserReady)("web console: seats", () => {
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
  // From the top of the page: who plays which seat, whose turn, the seat switcher.
  const shot = async (page: Page, name: string) => {
    await page.evaluate(() => scrollTo(0, 0));
    await page.screenshot({ path: join(shots, `${name}.png`), fullPage: process.env.EDGEGYM_FULL_SHOTS === "1" });
  };

  /** Plays the seat to play: the lowest free cell, after a thought only that seat may see. Returns the seat that moved. */
  async function move(page: Page): Promise<string> {
    const toPlay = ((await page.getByTestId("to-play").textContent()) ?? "").split(" ")[0] as string;
    await expect.poll(() => page.getByTestId("view-seat").textContent()).toBe(`${toPlay}'s conversation`);
    const [cell] = await freeCells(page);
    const turn = await page.getByTestId("turn").textContent();
    await page.getByRole("textbox", { name: "Assistant message" }).fill(`<think>secret of ${toPlay}</think><move>${cell}</move>`);
    await page.getByRole("button", { name: "Send" }).click();
    await expect.poll(() => page.getByTestId("turn").textContent()).not.toBe(turn);
    return toPlay;
  }

  it("plays tic-tac-toe-2p by hand on both seats: whose turn, each seat's own conversation, a score per seat", async () => {
    const page = await open("/ui/envs/tic-tac-toe-2p");
    // Both seats are the person's by default (self-play).
    expect(await page.getByLabel(/^x/).inputValue()).toBe("client");
    expect(await page.getByLabel(/^o/).inputValue()).toBe("client");
    await page.getByRole("button", { name: "Start episode" }).click();
    await expect.poll(() => page.getByTestId("to-play").textContent()).toBe("x to play (you)");
    expect(await page.getByTestId("seats").textContent()).toBe("x you · o you");
    expect(page.url()).toMatch(/\?episode=ep_[0-9a-f]+&seats=/);
    expect(await auditPage(page), "play, self-play").toEqual([]);

    // The lowest free cell on both sides: X takes 1, 3, 5, 7 and wins on the 3-5-7 diagonal.
    const order: string[] = [];
    for (let i = 0; i < 9; i++) {
      if ((await page.getByTestId("status").textContent())?.startsWith("done")) break;
      order.push(await move(page));
    }
    expect(order).toEqual(["x", "o", "x", "o", "x", "o", "x"]);
    await expect.poll(() => page.getByTestId("to-play").textContent()).toBe("game over");
    expect(await page.getByTestId("status").textContent()).toBe("done (game_over)");

    // Each seat's conversation holds its own thoughts and never the other's.
    await page.getByRole("button", { name: /^x's conversation/ }).click();
    await expect.poll(() => page.getByTestId("view-seat").textContent()).toBe("x's conversation");
    const x = (await page.locator(".transcript").textContent()) ?? "";
    expect(x).toContain("secret of x");
    expect(x).not.toContain("secret of o");
    expect(x).toContain("You win!");
    await page.getByRole("button", { name: /^o's conversation/ }).click();
    await expect.poll(() => page.getByTestId("view-seat").textContent()).toBe("o's conversation");
    const o = (await page.locator(".transcript").textContent()) ?? "";
    expect(o).toContain("secret of o");
    expect(o).not.toContain("secret of x");
    expect(o).toContain("X wins. You lose.");

    await page.getByRole("button", { name: "Score" }).click();
    await expect.poll(() => page.getByTestId("seat-reward-x").textContent()).toBe("1.100");
    expect(await page.getByTestId("seat-reward-o").textContent()).toBe("0.100");
    expect(await page.locator("[data-testid=seat-scores] tr[data-seat=x]").textContent()).toMatch(/win 1 · draw 0 · loss 0 .*moves 4/);
    expect(await page.getByTestId("reward").textContent()).toBe("1.100");
    await shot(page, "play-self-play");

    // The copied curl names the seats' steps in order: run as printed, it replays the game to the same score.
    const curl = (await page.getByTestId("curl").textContent()) ?? "";
    expect(curl.match(/"seat":"[xo]"/g)).toEqual(order.map((s) => `"seat":"${s}"`));
    expect(await page.getByTestId("python").textContent()).toContain(', seat="o")');
    const { stdout: replay } = await promisify(execFile)("bash", ["-c", `set -euo pipefail\n${curl}`], { encoding: "utf8", timeout: 30_000 });
    const score = JSON.parse(replay.slice(replay.lastIndexOf('{\n  "reward"'))) as { reward: number; seats: Record<string, { reward: number }> };
    expect([score.reward, score.seats.x?.reward, score.seats.o?.reward]).toEqual([1.1, 1.1, expect.closeTo(0.1, 10)]);

    // The episode page: the whole log (every message named for its seat) now that the game is over, and each seat's view.
    await page.getByTestId("episode-id").click();
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toContain("Episode");
    await expect.poll(() => page.locator(".msg-head .seat-name").count()).toBeGreaterThan(10);
    expect(await page.getByTestId("seat-views").textContent()).toContain("x: client · o: client");
    await page.getByRole("link", { name: "o's conversation" }).click();
    await expect.poll(() => page.getByRole("heading", { name: "Transcript: o's conversation" }).count()).toBe(1);
    expect(await page.locator(".transcript").textContent()).not.toContain("secret of x");
    expect(await auditPage(page), "episode, a seat's view").toEqual([]);
  }, 90_000);

  it("plays one seat against the environment's minimax, chosen in the start form, at phone width", async () => {
    const page = await open("/ui/envs/tic-tac-toe-2p", { width: 390, height: 844 });
    // Nobody but the environment: refused before anything is sent.
    await page.getByLabel(/^x/).selectOption("minimax");
    await page.getByLabel(/^o/).selectOption("random");
    await expect.poll(() => page.getByRole("alert").textContent()).toMatch(/Take at least one seat yourself/);
    expect(await page.getByRole("button", { name: "Start episode" }).isDisabled()).toBe(true);
    await page.getByLabel(/^o/).selectOption("client");
    await page.getByRole("button", { name: "Start episode" }).click();
    // minimax (x) has moved already: o opens with its move.
    await expect.poll(() => page.getByTestId("to-play").textContent()).toBe("o to play (you)");
    expect(await page.getByTestId("seats").textContent()).toBe("x minimax · o you");
    expect(await page.locator(".msg-user .msg-text").last().textContent()).toMatch(/X played \d/);
    // One seat is the person's: no seat switcher, and the other seat's view is never asked for.
    expect(await page.getByRole("group", { name: "conversation shown" }).count()).toBe(0);
    expect(await move(page)).toBe("o");

    // The running episode's page shows a seat's view (the whole log waits for the end) and continues the game as o.
    const id = (await page.getByTestId("episode-id").textContent()) ?? "";
    const inspect = await open(`/ui/episodes/${id}`);
    await expect.poll(() => inspect.getByTestId("seat-views").textContent()).toMatch(/x: minimax · o: client · o to play/);
    await inspect.getByRole("link", { name: "o's conversation" }).click();
    await expect.poll(() => inspect.getByRole("heading", { name: "Transcript: o's conversation" }).count()).toBe(1);
    expect(await auditPage(inspect), "episode of a running seated game").toEqual([]);
    await inspect.getByRole("link", { name: "Continue playing" }).click();
    await expect.poll(() => inspect.getByTestId("to-play").textContent()).toBe("o to play (you)");
    expect(await inspect.getByTestId("view-seat").textContent()).toBe("o's conversation");

    for (let i = 0; i < 5; i++) {
      if ((await page.getByTestId("status").textContent())?.startsWith("done")) break;
      expect(await move(page)).toBe("o");
    }
    await expect.poll(() => page.getByTestId("status").textContent()).toContain("done");
    await page.getByRole("button", { name: "Score" }).click();
    await expect.poll(() => page.locator("[data-testid=seat-scores] tr[data-seat=x] td").nth(1).textContent()).toBe("minimax");
    // Minimax does not lose: o draws or loses.
    expect(["0.100", "0.600"]).toContain(await page.getByTestId("seat-reward-o").textContent());
    expect(await page.getByTestId("reward").textContent()).toBe(await page.getByTestId("seat-reward-o").textContent());
    expect(await sidewaysOverflow(page), "play at 390 px").toBeLessThanOrEqual(0);
    expect(await auditPage(page), "play against minimax").toEqual([]);
    await shot(page, "play-vs-minimax-phone");
  }, 90_000);
});
