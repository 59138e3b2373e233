/**
 * What a person sees in a terminal during push, pull and watch: progress
 * lines with totals while work runs, then only whole lines (no progress line
 * left behind, nothing drawn over a summary or a warning), and after Ctrl-C
 * one whole line saying what stopped. Run in a real pseudo-terminal (support/terminal.ts).
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cliEnv, ferry, json, serverStats } from "./support/cli.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";
import { ferryInTerminal, screen } from "./support/terminal.ts";
import { writeTree } from "./support/tree.ts";

afterEach(cleanup);

const TASK_LINE = /^(scan|upload|push|pull|download) /;

function manyFiles(dir: string, count: number): void {
  const files: Record<string, string> = {};
  for (let i = 0; i < count; i++) files[`d${i % 30}/f${i}.txt`] = `file ${i}\n`;
  writeTree(dir, files);
}

async function until(what: string, ok: () => boolean, raw: () => string, ms = 30_000): Promise<void> {
  for (const end = Date.now() + ms; !ok() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 50));
  expect(ok(), `${what}; the terminal showed:\n${screen(raw()).join("\n")}`).toBe(true);
}

describe("ferry in a terminal", () => {
  it("shows push progress with a total, then the summary and warnings as whole lines", async () => {
    const ws = newWorkspace();
    const dir = tempDir("tty-push");
    manyFiles(dir, 2000);
    execFileSync("mkfifo", [join(dir, "pipe")]);
    const term = ferryInTerminal(["push", dir], cliEnv(ws, { FERRY_PACK_ENTRIES: "50" }));
    expect(await term.exited).toBe(3); // the fifo is skipped
    const raw = term.raw();
    expect(raw).toMatch(/push {5}\d+ \/ 2030 \d+%/);
    const shown = screen(raw);
    expect(shown.filter((l) => TASK_LINE.test(l))).toEqual([]);
    expect(shown).toEqual([
      expect.stringMatching(
        /^ferry pushed: sent 2030 entries \(\d+(\.\d)? KiB\), received 0 entries \(0 B\), \d+ round trips, [\d.]+ m?s$/,
      ),
      "ferry: skipped: pipe: not a file, directory or symlink",
    ]);
  }, 120_000);

  it("shows the bytes of a large file as it is hashed, with its size as the total", async () => {
    const ws = newWorkspace();
    const dir = tempDir("tty-large");
    writeFileSync(join(dir, "large.bin"), Buffer.alloc(48 * 1024 * 1024, 7));
    const term = ferryInTerminal(["push", dir], cliEnv(ws));
    expect(await term.exited).toBe(0);
    expect(term.raw()).toMatch(/hash {5}[\d.]+ [KM]iB \/ 48 MiB \d+% .*\/s/);
    // Its chunks are alike, so few bytes travel; the line of the hash is what this is about.
    expect(screen(term.raw())).toEqual([
      expect.stringMatching(/^ferry pushed: sent 1 entry \(.+\), received 0 entries/),
    ]);
  }, 120_000);

  it("shows pull progress with a total, then the summary alone", async () => {
    const ws = newWorkspace();
    const src = tempDir("tty-src");
    manyFiles(src, 2000);
    expect(ferry(["push", src], cliEnv(ws)).status).toBe(0);
    const term = ferryInTerminal(["pull", tempDir("tty-pull")], cliEnv(ws));
    expect(await term.exited).toBe(0);
    const raw = term.raw();
    expect(raw).toMatch(/pull {5}\d+ \/ 2030 \d+%/);
    expect(screen(raw)).toEqual([
      expect.stringMatching(
        /^ferry pulled: sent 0 entries \(0 B\), received 2030 entries \(.+\), \d+ round trips, .+$/,
      ),
    ]);
  }, 120_000);

  it("says in one line that Ctrl-C stopped a push, and the next push carries on", async () => {
    const ws = newWorkspace();
    const dir = tempDir("tty-int");
    manyFiles(dir, 2000);
    const term = ferryInTerminal(["push", dir], cliEnv(ws, { FERRY_PACK_ENTRIES: "20" }));
    // Interrupted once the server has taken a pack or more.
    await until("a pack pushed", () => /push {5}[1-9]\d* \/ 2030/.test(term.raw()), term.raw);
    term.interrupt();
    expect(await term.exited).toBe(130);
    // `stopping…` at once (issue 29), then what the stop kept.
    expect(screen(term.raw())).toEqual([
      expect.stringMatching(/^(\^C)?ferry: stopping…$/),
      expect.stringMatching(
        /^ferry: interrupted: stopped by Ctrl-C: what the server took is kept, and the next push carries on from there$/,
      ),
    ]);
    const rest = json<{ entriesSent: number; resumedFrom: { rev: number } }>(
      ferry(["push", dir, "--json"], cliEnv(ws)),
    );
    expect(rest.resumedFrom.rev).toBeGreaterThan(0);
    expect(rest.entriesSent).toBeLessThan(2030);
    expect((await serverStats(ws)).files).toBe(2000);
  }, 120_000);

  it("says what it watches, names what moved in one line per sync, and ends whole after Ctrl-C", async () => {
    const ws = newWorkspace();
    const dir = tempDir("tty-watch");
    writeTree(dir, { "first.txt": "1\n" });
    const term = ferryInTerminal(["sync", dir, "--watch", "--transport", "http", "--interval", "200"], cliEnv(ws));
    const shows = (re: RegExp) => () => screen(term.raw()).some((l) => re.test(l));
    await until("the watching line", shows(/^ferry: watching /), term.raw);
    for (let i = 0; i < 5; i++) writeFileSync(join(dir, `new-${i}.txt`), `${i}\n`);
    await until("a line naming what was sent", shows(/ sent new-\d\.txt/), term.raw);
    const other = tempDir("tty-other");
    writeTree(other, { "theirs.txt": "theirs\n" });
    expect(ferry(["sync", other], cliEnv(ws)).status).toBe(0);
    await until("a line naming what was received", shows(/ received theirs\.txt$/), term.raw);
    term.interrupt();
    expect(await term.exited).toBe(0);

    const shown = screen(term.raw());
    expect(shown[0]).toMatch(/^ferry synced: sent 1 entry \(2 B\), received 0 entries \(0 B\), /);
    expect(shown[1]).toBe(`ferry: watching ${dir} (workspace '${ws}' at ${cliEnv(ws).FERRY_URL}); Ctrl-C stops`);
    const moves = shown.slice(2, -2);
    for (const line of moves) expect(line).toMatch(/^ferry \d\d:\d\d:\d\d (sent|received) [^;]+(; received [^;]+)?$/);
    expect(moves.join("\n")).toMatch(/sent (new-\d\.txt, ){2}new-\d\.txt and 2 more|sent new-\d\.txt/);
    expect(shown.at(-2)).toMatch(/^(\^C)?ferry: stopping…$/);
    expect(shown.at(-1)).toBe("ferry: stopped watching");
  }, 120_000);
});
