/**
 * The workspace page on a phone and from the keyboard (issue 29): at 390 px
 * wide nothing scrolls sideways and a file's name keeps its words on a line;
 * the arrow keys reach the file list on load, without a Tab first; a
 * workspace nothing was ever pushed to says so instead of looking empty.
 */
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type Browser, launchBrowser } from "./support/browser.ts";
import { cliEnv, ferry } from "./support/cli.ts";
import { cleanup, endpointFor, newWorkspace, tempDir } from "./support/hosts.ts";
import { writeTree } from "./support/tree.ts";

/** What the tests read in the page's global scope (this file is typed without the DOM). */
interface Tab {
  document: {
    activeElement: { textContent: string } | null;
    documentElement: { scrollWidth: number; clientWidth: number };
  };
}

const NAME = "a-rather-long-file-name-for-a-phone-screen.md";

let browser: Browser;
let workspace: string;

async function open(name: string, width: number): Promise<Page> {
  const page = await browser.context.newPage();
  await page.setViewportSize({ width, height: 844 });
  await page.goto(`${inject("ferryUrl")}/w/${name}`);
  await page.getByLabel("Token").fill(endpointFor(name, "r").token);
  await page.getByRole("button", { name: "Open" }).click();
  await page.locator('[data-stat="files"] dd').waitFor();
  return page;
}

function overflow(page: Page): Promise<number> {
  return page.evaluate(() => {
    const root = (globalThis as unknown as Tab).document.documentElement;
    return root.scrollWidth - root.clientWidth;
  });
}

/** How many lines a file name's button takes in the list. */
async function linesOf(page: Page, name: string): Promise<number> {
  const button = page.locator("table.tree").getByRole("button", { name, exact: true });
  const box = await button.boundingBox();
  const lineHeight = await button.evaluate(
    (e) =>
      Number.parseFloat(
        (globalThis as unknown as { getComputedStyle(e: unknown): { lineHeight: string } }).getComputedStyle(e)
          .lineHeight,
      ) || 20,
  );
  return Math.round((box?.height ?? 0) / lineHeight);
}

beforeAll(async () => {
  browser = await launchBrowser();
  workspace = newWorkspace();
  const src = tempDir("page-phone");
  writeTree(src, {
    "README.md": "# phone\n",
    [NAME]: "words\n",
    "node_modules/some-package-name/lib/index.js": "module.exports = 1;\n",
  });
  const r = ferry(["push", src, "--json"], cliEnv(workspace));
  expect(r.status, r.stderr).toBe(0);
});

afterAll(async () => {
  await browser?.close();
  await cleanup();
});

describe("workspace page on a phone and the keyboard", () => {
  for (const width of [390, 1280]) {
    it(`fits a ${width} px window: no sideways scroll, names wrap only where they must`, async () => {
      const page = await open(workspace, width);
      const long = page.locator("table.tree").getByRole("button", { name: NAME, exact: true });
      await long.waitFor();
      expect(await overflow(page)).toBe(0);
      expect(await linesOf(page, "README.md")).toBe(1);
      const dir = await page.locator("table.tree a.name.dir", { hasText: "node_modules/" }).boundingBox();
      expect(dir?.height ?? 0).toBeLessThan(30);
      // A name longer than its room wraps across the room, not down a column a few letters wide.
      const table = await page.locator("table.tree").boundingBox();
      expect((await long.boundingBox())?.width ?? 0).toBeGreaterThan(0.4 * (table?.width ?? 0));
      await page.close();
    });
  }

  it("moves into the file list with the arrow keys on load, without a Tab first", async () => {
    const page = await open(workspace, 1280);
    await page.locator("table.tree").getByRole("button", { name: NAME, exact: true }).waitFor();
    await page.keyboard.press("ArrowDown");
    const focused = () =>
      page.evaluate(() => (globalThis as unknown as Tab).document.activeElement?.textContent ?? null);
    expect(await focused()).toBe("README.md");
    await page.keyboard.press("ArrowDown");
    expect(await focused()).toBe(NAME);
    await page.close();
  });

  it("says so when nothing was ever pushed to the workspace", async () => {
    const typo = `${workspace}-typo`;
    const page = await open(typo, 1280);
    const notice = page.getByText("Nothing was ever pushed to workspace");
    await notice.waitFor();
    expect(await page.locator(".notice").textContent()).toContain(typo);
    // A workspace with content shows no such notice.
    const real = await open(workspace, 1280);
    await real.locator("table.tree").getByRole("button", { name: NAME, exact: true }).waitFor();
    expect(await real.locator(".notice").isVisible()).toBe(false);
    await page.close();
    await real.close();
  });
});
