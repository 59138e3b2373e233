/**
 * The workspace page in a real browser (Debian's chromium through
 * playwright-core) against the real local server: sign-in, counts, browsing,
 * download, live updates after a push by the CLI, and refused tokens.
 * FERRY_SCREENSHOTS=docs also writes the README's screenshots there.
 */
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { signToken, verifyToken } from "../../protocol/token.ts";
import { type Browser, launchBrowser } from "./support/browser.ts";
import { cliEnv, ferry, json } from "./support/cli.ts";
import { cleanup, endpointFor, newWorkspace, tempDir } from "./support/hosts.ts";
import { pseudoRandom, symlink, writeTree } from "./support/tree.ts";

const SCREENSHOTS = process.env.FERRY_SCREENSHOTS;
const BLOB = pseudoRandom(3 * 1024 * 1024 + 12345, 7);

/** What the tests read in the page's global scope (this file is typed without the DOM). */
interface Tab {
  marker?: number;
  pwned?: number;
  sessionStorage: { getItem(key: string): string | null };
  document: {
    activeElement: { textContent: string };
    documentElement: { scrollWidth: number; clientWidth: number };
  };
}

/** `rgb(r, g, b)` as computed styles spell a colour. */
function rgb(css: string | undefined): number[] {
  return (css?.match(/\d+(\.\d+)?/g) ?? []).slice(0, 3).map(Number);
}

/** WCAG's contrast ratio of two sRGB colours. */
function contrast(a: number[], b: number[]): number {
  const lum = (c: number[]) =>
    c
      .map((v) => v / 255)
      .map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4))
      .reduce((sum, v, i) => sum + v * ([0.2126, 0.7152, 0.0722][i] as number), 0);
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

/** How far the page is wider than the window (0: nothing sticks out sideways). */
function overflow(page: Page): Promise<number> {
  return page.evaluate(() => {
    const root = (globalThis as unknown as Tab).document.documentElement;
    return root.scrollWidth - root.clientWidth;
  });
}

let browser: Browser;
let workspace: string;
let src: string;

function push(): void {
  const r = ferry(["push", src, "--json", "--label", "laptop"], cliEnv(workspace));
  expect(r.status, r.stderr).toBe(0);
}

async function signedIn(): Promise<Page> {
  const page = await browser.context.newPage();
  await page.goto(`${inject("ferryUrl")}/w/${workspace}`);
  await page.getByLabel("Token").fill(endpointFor(workspace, "r").token);
  await page.getByRole("button", { name: "Open" }).click();
  await page.locator('[data-stat="files"] dd').waitFor();
  return page;
}

async function shoot(page: Page, name: string): Promise<void> {
  if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, name), fullPage: true });
}

beforeAll(async () => {
  browser = await launchBrowser();
  // Each run has a fresh server, so the screenshots can show a plain name.
  workspace = SCREENSHOTS ? "demo" : newWorkspace();
  src = tempDir("page-src");
  writeTree(src, {
    "README.md": "# demo\n\nA workspace the page shows.\n",
    "package.json": '{ "name": "demo", "version": "1.0.0" }\n',
    "src/index.ts": 'export const hello = "world";\n',
    "src/lib/util.ts": "export const twice = (n: number) => 2 * n;\n",
    "src/lib/format.ts": "export const pad = (s: string) => s.padStart(8);\n",
    "docs/guide.md": "# Guide\n",
    "data/blob.bin": BLOB,
    "data/notes.txt": "first\n",
  });
  symlink(src, "latest", "data/blob.bin");
  push();
});

afterAll(async () => {
  await browser?.close();
  await cleanup();
});

describe("workspace page", () => {
  it("signs in with a pasted token and shows the counts, the tree and the recent changes", async () => {
    const page = await signedIn();
    expect(await page.locator('[data-stat="files"] dd').textContent()).toBe("8");
    expect(await page.locator('[data-stat="dirs"] dd').textContent()).toBe("4");
    expect(await page.locator('[data-stat="symlinks"] dd').textContent()).toBe("1");
    const names = await page.locator("table.tree td:first-child .name").allTextContents();
    // Byte order of names, as the server pages them.
    expect(names).toEqual(["README.md", "data/", "docs/", "latest → data/blob.bin", "package.json", "src/"]);
    await expect.poll(() => page.locator(".revs > li").count()).toBe(1);
    // The chart of revs and of the bytes they wrote (the files of rev 1, blob.bin's 3 MiB most of them).
    const chart = page.locator("figure.chart");
    expect(await chart.locator('svg[data-series="revs"]').getAttribute("aria-label")).toBe(
      "1 rev writing 13 entries in the last 48 hours",
    );
    expect(await chart.locator('svg[data-series="bytes"]').getAttribute("aria-label")).toBe(
      "3.0 MiB of files written in the last 48 hours",
    );
    // The token stays in the tab: never in the URL or a cookie.
    expect(page.url()).not.toContain("token");
    expect(await browser.context.cookies()).toEqual([]);
    await page.close();
  });

  it("browses into a directory with the keyboard and downloads a file byte for byte", async () => {
    const page = await signedIn();
    await page.locator("table.tree .name").first().focus();
    await page.keyboard.press("ArrowDown");
    expect(await page.evaluate(() => (globalThis as unknown as Tab).document.activeElement.textContent)).toBe("data/");
    await page.keyboard.press("Enter");
    await page.waitForURL(/\?dir=data$/);
    await page.getByRole("button", { name: "blob.bin", exact: true }).waitFor();
    expect(await page.locator("nav[aria-label=Directory] [aria-current=page]").textContent()).toBe("data");
    await shoot(page, "page-browse.png");

    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "blob.bin", exact: true }).click(),
    ]);
    expect(download.suggestedFilename()).toBe("blob.bin");
    const bytes = readFileSync(await download.path());
    expect(bytes.equals(Buffer.from(BLOB))).toBe(true);

    await page.keyboard.press("Backspace");
    await page.waitForURL((url) => !url.search.includes("dir="));
    await page.close();
  });

  it("opens with a ferry open link, keeping the token out of the address bar", async () => {
    const r = ferry(["open", src, "--json", "--ttl", "10m"], cliEnv(workspace));
    expect(r.status, r.stderr).toBe(0);
    const { url } = json<{ url: string }>(r);
    expect(url).toMatch(new RegExp(`/w/${workspace}#token=ferry1\\.`));
    const page = await browser.context.newPage();
    await page.goto(url);
    await page.locator('[data-stat="files"] dd').waitFor();
    expect(page.url()).toBe(`${inject("ferryUrl")}/w/${workspace}`);
    const kept = await page.evaluate(
      (ws) => (globalThis as unknown as Tab).sessionStorage.getItem(`ferry.token.${ws}`),
      workspace,
    );
    expect(kept).toBe(url.slice(url.indexOf("#token=") + 7));
    await page.close();

    // With only a token (no secret), the server derives the link's read-only token from it.
    const env = { ...cliEnv(workspace), FERRY_TOKEN: endpointFor(workspace, "rw").token, FERRY_SECRET: "" };
    const derived = json<{ url: string; exp: number }>(ferry(["open", src, "--json", "--ttl", "5m"], env));
    const claims = verifyToken(
      derived.url.split("#token=")[1] ?? "",
      inject("ferrySecret"),
      workspace,
      Date.now() / 1000,
    );
    expect(claims.rights).toBe("r");
    expect(claims.exp).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 300);

    // The directory's own workspace when none is named; another one named is refused.
    const unnamed = cliEnv(workspace);
    delete unnamed.FERRY_WORKSPACE;
    const bound = ferry(["open", src, "--json"], unnamed);
    expect(bound.status, bound.stderr).toBe(0);
    expect(json<{ url: string }>(bound).url).toMatch(
      new RegExp(`^${inject("ferryUrl")}/w/${workspace}#token=ferry1\\.`),
    );
    const elsewhere = ferry(["open", src, "--json", "-w", "someone-else"], cliEnv(workspace));
    expect(elsewhere.status).not.toBe(0);
    expect(elsewhere.stderr).toMatch(/^ferry: bound_elsewhere: /);
  });

  it("shows a push by the CLI without a reload", async () => {
    const page = await signedIn();
    await page.locator(".live[data-state=live]").waitFor();
    await page.evaluate(() => {
      (globalThis as unknown as Tab).marker = 42;
    });
    writeTree(src, { "fresh.txt": "new\n", "data/notes.txt": "second\n" });
    push();
    await page
      .locator("table.tree")
      .getByRole("button", { name: "fresh.txt", exact: true })
      .waitFor({ timeout: 15_000 });
    await page.locator(".revs").getByRole("button", { name: "fresh.txt", exact: true }).waitFor();
    await expect.poll(() => page.locator('[data-stat="files"] dd').textContent(), { timeout: 15_000 }).toBe("9");
    await expect.poll(() => page.locator(".revs > li").count()).toBe(2);
    expect(await page.evaluate(() => (globalThis as unknown as Tab).marker)).toBe(42);

    // A second host's push shows up too, under its own host id.
    const other = tempDir("page-other");
    writeTree(other, { "notes/todo.md": "- ship the page\n" });
    const r = ferry(["push", other, "--json", "--label", "ci-runner"], cliEnv(workspace));
    expect(r.status, r.stderr).toBe(0);
    await expect.poll(() => page.locator('[data-stat="hosts"] dd').textContent(), { timeout: 15_000 }).toBe("2");
    // Hosts go by the labels they gave themselves, in the hosts table and in recent changes.
    await expect.poll(() => page.locator(".revs .rev-head .host").first().textContent()).toBe("ci-runner");
    await expect.poll(() => page.locator("table.hosts .host").allTextContents()).toEqual(["ci-runner", "laptop"]);
    // How far behind each host is: ci-runner's first push pulled first (it holds revs 1 to 3);
    // laptop pushed revs 1 and 2, each right after its pull position, and has not pulled rev 3.
    await expect
      .poll(() => page.locator("table.hosts td.pulled").allTextContents())
      .toEqual(["rev 3 (up to date)", "rev 2 (1 rev behind)"]);
    await page.locator("table.tree").getByRole("link", { name: "notes/" }).waitFor();
    await shoot(page, "page-workspace.png");
    // A pull to the end is heard too (no commit, so no poke: the overview shows it at its next read).
    const pulled = ferry(["pull", src, "--json"], cliEnv(workspace));
    expect(pulled.status, pulled.stderr).toBe(0);
    await page.reload();
    await expect
      .poll(() => page.locator("table.hosts td.pulled").allTextContents())
      .toEqual(["rev 3 (up to date)", "rev 3 (up to date)"]);
    await page.close();
  });

  it("lists a file's versions and downloads an older one", async () => {
    // data/notes.txt was "first\n" at rev 1 and "second\n" since the push of the test before.
    const page = await signedIn();
    await page.goto(`${inject("ferryUrl")}/w/${workspace}?dir=data`);
    await page.getByRole("button", { name: "Versions of notes.txt" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByText("(current)").waitFor();
    expect(await dialog.locator("li").count()).toBe(2);
    await shoot(page, "page-versions.png");
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      dialog.getByRole("button", { name: "Download rev 1" }).click(),
    ]);
    expect(readFileSync(await download.path(), "utf8")).toBe("first\n");
    await page.keyboard.press("Escape");
    await expect.poll(() => dialog.isVisible()).toBe(false);
    await page.close();
  });

  it("says clearly when a token is forged, expired or for another workspace", async () => {
    const page = await browser.context.newPage();
    const base = `${inject("ferryUrl")}/w/${workspace}`;
    const problem = page.locator(".problem");

    await page.goto(`${base}#token=ferry1.not.valid`);
    expect(await problem.textContent()).toContain("not signed by this server");

    const expired = signToken(
      { ws: workspace, rights: "r", exp: Math.floor(Date.now() / 1000) - 5 },
      inject("ferrySecret"),
    );
    await page.goto("about:blank");
    await page.goto(`${base}#token=${expired}`);
    expect(await problem.textContent()).toContain("expired");

    await page.getByLabel("Token").fill(endpointFor("someone-else", "r").token);
    await page.getByRole("button", { name: "Open" }).click();
    await expect.poll(() => problem.textContent()).toContain(`does not give access to workspace “${workspace}”`);
    await shoot(page, "page-signin.png");

    // The field's outline stands out at 3:1 (WCAG 1.4.11) from the form and from the field itself, in both schemes.
    for (const colorScheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme });
      const colors = await page.locator("#token").evaluate((input: { closest(s: string): unknown }) => {
        const style = (e: unknown, p: string) =>
          (globalThis as unknown as { getComputedStyle(e: unknown): Record<string, string> }).getComputedStyle(e)[
            p
          ] as string;
        return [
          style(input, "borderTopColor"),
          style(input, "backgroundColor"),
          style(input.closest("form"), "backgroundColor"),
        ];
      });
      const [border, field, form] = colors.map(rgb) as [number[], number[], number[]];
      expect(contrast(border, field), `${colorScheme}: ${colors}`).toBeGreaterThanOrEqual(3);
      expect(contrast(border, form), `${colorScheme}: ${colors}`).toBeGreaterThanOrEqual(3);
    }
    await page.close();
  });

  it("opens a workspace from the landing page's form", async () => {
    const page = await browser.context.newPage();
    await page.goto(`${inject("ferryUrl")}/`);
    await page.getByLabel("Workspace", { exact: true }).fill(workspace);
    await page.getByLabel("Token").fill(endpointFor(workspace, "r").token);
    await page.getByRole("button", { name: "Open" }).click();
    await page.waitForURL(`${inject("ferryUrl")}/w/${workspace}`);
    await page.locator('[data-stat="files"] dd').waitFor();
    await page.close();
  });

  it("pages a large directory with Show more", async () => {
    const many = Object.fromEntries(
      Array.from({ length: 230 }, (_, i) => [`many/f${String(i).padStart(3, "0")}`, `${i}\n`]),
    );
    writeTree(src, many);
    push();
    const page = await signedIn();
    await page.goto(`${inject("ferryUrl")}/w/${workspace}?dir=many`);
    const rows = page.locator("table.tree td:first-child .name");
    await expect.poll(() => rows.count()).toBe(201); // the parent row and the first 200
    await page.getByRole("button", { name: "Show more" }).click();
    await expect.poll(() => rows.count()).toBe(231);
    expect(await rows.last().textContent()).toBe("f229");
    await expect.poll(() => page.getByRole("button", { name: "Show more" }).count()).toBe(0);
    await page.close();
  });

  it("signs out with a clear message when the token expires while the page is open", async () => {
    const page = await browser.context.newPage();
    const exp = Math.floor(Date.now() / 1000) + 4;
    const token = signToken({ ws: workspace, rights: "r", exp }, inject("ferrySecret"));
    await page.goto(`${inject("ferryUrl")}/w/${workspace}#token=${token}`);
    await page.locator(".live[data-state=live]").waitFor();
    await page.locator(".problem").waitFor({ timeout: 20_000 });
    expect(await page.locator(".problem").textContent()).toContain("expired");
    const kept = await page.evaluate(
      (ws) => (globalThis as unknown as Tab).sessionStorage.getItem(`ferry.token.${ws}`),
      workspace,
    );
    expect(kept).toBeNull();
    await page.close();
  });

  it("only reads: every request a GET, no URL or Referer carrying the token, nothing sent on the socket", async () => {
    const token = endpointFor(workspace, "r").token;
    const page = await browser.context.newPage();
    const requests: { method: string; sent: string; referer: string | undefined }[] = [];
    // What goes on the wire is the URL before any fragment.
    page.on("request", (r) =>
      requests.push({ method: r.method(), sent: r.url().split("#")[0] ?? "", referer: r.headers().referer }),
    );
    const failed: string[] = [];
    page.on("response", (r) => {
      if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
    });
    const sockets: string[] = [];
    let framesSent = 0;
    page.on("websocket", (ws) => {
      sockets.push(ws.url());
      ws.on("framesent", () => framesSent++);
    });
    await page.goto(`${inject("ferryUrl")}/w/${workspace}#token=${token}`);
    await page.locator(".live[data-state=live]").waitFor();
    await page.locator("table.tree").getByRole("link", { name: "data/" }).click();
    await page.getByRole("button", { name: "Versions of notes.txt" }).click();
    const dialog = page.getByRole("dialog");
    await Promise.all([page.waitForEvent("download"), dialog.getByRole("button", { name: "Download rev 1" }).click()]);
    await page.keyboard.press("Escape");
    await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "blob.bin", exact: true }).click(),
    ]);
    const revs = await page.locator(".revs > li").count();
    writeTree(src, { "data/notes.txt": "third\n" });
    push();
    await expect.poll(() => page.locator(".revs > li").count(), { timeout: 15_000 }).toBe(revs + 1);

    expect(requests.length).toBeGreaterThan(5);
    expect(requests.filter((r) => r.method !== "GET")).toEqual([]);
    // Nothing the page asks for is missing (a browser asks /favicon.ico unless the page names an icon).
    expect(failed).toEqual([]);
    expect(requests.filter((r) => r.sent.includes(token) || (r.referer ?? "") !== "")).toEqual([]);
    expect(sockets).toEqual([`${inject("ferryUrl").replace(/^http/, "ws")}/v1/workspaces/${workspace}/sync`]);
    expect(framesSent).toBe(0);
    expect(await browser.context.cookies()).toEqual([]);
    await page.close();
  });

  it("shows hostile and very long names as text, within the window's width", async () => {
    const script = '<img src=x onerror="globalThis.pwned=1">.txt';
    const long = `${"n".repeat(250)}.txt`;
    // Twelve directories of 200 bytes each: the breadcrumb holds all of them.
    const deep = Array.from({ length: 12 }, (_, i) => `${"d".repeat(199)}${i % 10}`).join("/");
    writeTree(src, { [`hostile/${script}`]: "x\n", [`hostile/${long}`]: "long\n", [`${deep}/f.txt`]: "deep\n" });
    symlink(src, 'hostile/<svg onload="globalThis.pwned=2">', '<img src=x onerror="globalThis.pwned=3">');
    push();
    rmSync(join(src, "hostile", long));
    push();

    const page = await signedIn();
    await page.goto(`${inject("ferryUrl")}/w/${workspace}?dir=hostile`);
    const names = page.locator("table.tree td:first-child .name");
    await expect
      .poll(() => names.allTextContents())
      .toEqual(["..", script, '<svg onload="globalThis.pwned=2"> → <img src=x onerror="globalThis.pwned=3">']);
    expect(await page.locator("table.tree").locator("img, svg, script").count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as unknown as Tab).pwned)).toBeUndefined();

    // The deleted long name in recent changes, whose versions still hold its bytes.
    await page.goto(`${inject("ferryUrl")}/w/${workspace}`);
    const deleted = page.locator(".revs").getByRole("button", { name: `hostile/${long} (deleted)` });
    await deleted.waitFor();
    expect(await overflow(page)).toBe(0);
    await deleted.click();
    const dialog = page.getByRole("dialog");
    await dialog.getByText("(current) deleted").waitFor();
    const wider = (d: { scrollWidth: number; clientWidth: number }) => d.scrollWidth - d.clientWidth;
    expect(await dialog.evaluate(wider)).toBe(0);
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      dialog.getByRole("button", { name: /^Download rev / }).click(),
    ]);
    expect(readFileSync(await download.path(), "utf8")).toBe("long\n");
    await page.keyboard.press("Escape");

    // The deep path's breadcrumb and versions.
    await page.goto(`${inject("ferryUrl")}/w/${workspace}?dir=${encodeURIComponent(deep)}`);
    await page.getByRole("button", { name: "f.txt", exact: true }).waitFor();
    expect(await overflow(page)).toBe(0);
    await page.getByRole("button", { name: "Versions of f.txt" }).click();
    await dialog.getByText("(current)").waitFor();
    expect(await dialog.evaluate(wider)).toBe(0);
    await page.close();
  });

  it("serves the page with a CSP that forbids inline script", async () => {
    const res = await fetch(`${inject("ferryUrl")}/w/${workspace}`);
    expect(res.status).toBe(200);
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    const html = await res.text();
    expect(html).not.toMatch(/<script>/);
    // Its icon is inline: a browser asks the server for no /favicon.ico (a 404 in every page load's log).
    expect(html).toMatch(/<link rel="icon" href="data:image\/svg\+xml,/);
  });
});
