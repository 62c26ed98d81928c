import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { expect } from "vitest";

/** The console's bundle, built as `npm run build` does when a browser test runs alone. */
export function ensureConsoleBuilt(): void {
  if (existsSync(resolve("dist/console/ui/index.html")) && existsSync(resolve("dist/console/docs/init.js"))) return;
  execFileSync(process.execPath, [resolve("node_modules/vite/bin/vite.js"), "build", "--config", "console/vite.config.ts"], { stdio: "inherit" });
}

/**
 * Browser contexts for the console tests: each blocks and records every request off the
 * server's origin (the console must work air-gapped) and every error thrown in the page.
 * `check()` after a test asserts both lists are empty and closes the contexts.
 */
export function consolePages(browser: () => Browser) {
  const contexts: BrowserContext[] = [];
  let outside: string[] = [];
  let pageErrors: string[] = [];
  return {
    async open(origin: string, path: string, viewport = { width: 1280, height: 800 }): Promise<Page> {
      const context = await browser().newContext({ viewport });
      contexts.push(context);
      await context.route("**/*", (route) => {
        const url = route.request().url();
        if (url.startsWith(`${origin}/`) || url.startsWith("data:")) return route.continue();
        outside.push(url);
        return route.abort();
      });
      const page = await context.newPage();
      page.on("pageerror", (err) => pageErrors.push(String(err)));
      await page.goto(`${origin}${path}`);
      return page;
    },
    async check(): Promise<void> {
      while (contexts.length) await contexts.pop()?.close();
      const found = { outside, pageErrors };
      outside = [];
      pageErrors = [];
      expect(found.outside, "requests to anywhere but the server").toEqual([]);
      expect(found.pageErrors, "errors thrown in the page").toEqual([]);
    },
  };
}

/** What has the keyboard focus, in words, for failure messages. */
export function describeFocus(page: Page): Promise<string> {
  return page.evaluate(() => {
    const el = document.activeElement;
    if (!el) return "nothing";
    const name = el.getAttribute("aria-label") ?? (el.textContent ?? "").trim().slice(0, 40);
    return `<${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ""}> ${name}`;
  });
}

const isFocused = (target: Locator): Promise<boolean> => target.evaluate((el) => el === document.activeElement);

/**
 * Presses Tab (Shift+Tab with `back`) until `target` has the focus, as a keyboard user
 * would, and checks the focus is visible there: an outline of at least 2 px. Fails if the
 * target is not reached within `max` presses (not reachable from the keyboard).
 */
export async function tabTo(page: Page, target: Locator, { back = false, max = 60 } = {}): Promise<void> {
  await target.waitFor();
  for (let i = 0; i < max; i++) {
    await page.keyboard.press(back ? "Shift+Tab" : "Tab");
    if (await isFocused(target)) {
      const outline = await target.evaluate((el) => {
        const s = getComputedStyle(el);
        return { style: s.outlineStyle, width: parseFloat(s.outlineWidth) };
      });
      expect(outline.style, `focus is visible on ${await describeFocus(page)}`).not.toBe("none");
      expect(outline.width).toBeGreaterThanOrEqual(2);
      return;
    }
  }
  throw new Error(`${String(target)} not reached with ${max} ${back ? "Shift+Tab" : "Tab"} presses; the focus is on ${await describeFocus(page)}`);
}

/**
 * The page's structure as assistive technology and keyboard users meet it: one h1, the
 * banner/navigation/main landmarks, a skip link to main, a name on every control, and no
 * positive tabindex (which would reorder the keyboard's path). Returns the problems found.
 */
export function auditPage(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const problems: string[] = [];
    const visible = (el: Element) => (el as HTMLElement).offsetParent !== null || getComputedStyle(el).position === "fixed";
    const h1 = [...document.querySelectorAll("h1")].filter(visible);
    if (h1.length !== 1) problems.push(`${h1.length} h1 headings`);
    for (const sel of ["header", "nav", "main"]) if (!document.querySelector(sel)) problems.push(`no <${sel}> landmark`);
    const skip = document.querySelector<HTMLAnchorElement>("a.skip");
    if (!skip || skip.getAttribute("href") !== "#main") problems.push("no skip link to #main");
    for (const el of document.querySelectorAll<HTMLElement>("input, select, textarea")) {
      if (!visible(el) || (el as HTMLInputElement).type === "hidden") continue;
      const labelled = ((el as HTMLInputElement).labels?.length ?? 0) > 0 || el.getAttribute("aria-label") || el.getAttribute("aria-labelledby");
      if (!labelled) problems.push(`unlabelled <${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ""}>`);
    }
    for (const el of document.querySelectorAll<HTMLElement>("button, a[href], summary")) {
      if (!visible(el)) continue;
      if (!(el.textContent ?? "").trim() && !el.getAttribute("aria-label")) problems.push(`a <${el.tagName.toLowerCase()}> with no name`);
    }
    for (const el of document.querySelectorAll<HTMLElement>("[tabindex]")) if (el.tabIndex > 0) problems.push(`tabindex ${el.tabIndex} on <${el.tagName.toLowerCase()}>`);
    return problems;
  });
}

/** How far the page scrolls sideways (0 or less: it fits the viewport). */
export function sidewaysOverflow(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
}
