/**
 * Ignore rules are live and shared (issue 26, item 4), with real
 * `ferry sync --watch` processes against `ferry serve`: a `.ferryignore`
 * written while a watch runs applies at once, on this host and on every
 * host that pulls it; one in a subfolder applies below it, as git reads
 * `.gitignore`; a path that becomes ignored stays on every host (its
 * deletion here is never pushed); a path no longer ignored is pushed.
 *
 * What is not pushed is checked after a marker written later is on the
 * server: the watch sends paths in the order it hears of them, so by then
 * it has decided about everything written before.
 */
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cliEnv, ferry } from "./support/cli.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";
import { writeTree } from "./support/tree.ts";
import { until } from "./support/until.ts";
import { serverHasFile, watchesEndedAfterEach } from "./support/watching.ts";

afterEach(cleanup);

const startWatch = watchesEndedAfterEach();

/** Writes `marker` in `dir` and waits until the server holds it: what the watch heard before is decided. */
async function settled(ws: string, dir: string, marker: string): Promise<void> {
  writeFileSync(join(dir, marker), `${marker}\n`);
  await until(`${marker} on the server`, () => serverHasFile(ws, marker));
}

/** `settled`, then again after the watch's quiet full scan (1 s after the last event) has run. */
async function settledPastFullScan(ws: string, dir: string): Promise<void> {
  await settled(ws, dir, "marker-1.txt");
  await new Promise((r) => setTimeout(r, 1500));
  await settled(ws, dir, "marker-2.txt");
}

describe("ignore rules under ferry sync --watch", () => {
  it("applies a .ferryignore written while it watches, at once", async () => {
    const ws = newWorkspace();
    const dir = tempDir("a");
    writeTree(dir, { "seed.txt": "seed\n" });
    await startWatch(dir, cliEnv(ws));
    writeFileSync(join(dir, ".ferryignore"), "*.log\nbuild/\n");
    await until(".ferryignore on the server", () => serverHasFile(ws, ".ferryignore"));
    writeTree(dir, { "debug.log": "noise\n", "build/out.js": "built\n", "src/kept.js": "kept\n" });
    await settledPastFullScan(ws, dir);
    expect(await serverHasFile(ws, "src/kept.js")).toBe(true);
    expect(await serverHasFile(ws, "debug.log")).toBe(false);
    expect(await serverHasFile(ws, "build/out.js")).toBe(false);
  });

  it("keeps local what a .ferryignore pulled from another host ignores", async () => {
    const ws = newWorkspace();
    const a = tempDir("a");
    const b = tempDir("b");
    writeTree(a, { "seed.txt": "seed\n" });
    await startWatch(a, cliEnv(ws));
    await startWatch(b, cliEnv(ws));
    await until("seed.txt on b", () => existsSync(join(b, "seed.txt")));
    writeFileSync(join(a, ".ferryignore"), "*.log\n");
    await until(".ferryignore on b", () => existsSync(join(b, ".ferryignore")));
    writeTree(b, { "b.log": "b's own\n" });
    await settledPastFullScan(ws, b);
    expect(await serverHasFile(ws, "b.log")).toBe(false);
    expect(existsSync(join(a, "b.log"))).toBe(false);
  });

  it("applies a .ferryignore in a subfolder below it, relative to it, over its parents' rules", async () => {
    const ws = newWorkspace();
    const dir = tempDir("a");
    writeTree(dir, { ".ferryignore": "*.log\n", "seed.txt": "seed\n" });
    await startWatch(dir, cliEnv(ws));
    writeTree(dir, { "sub/.ferryignore": "*.tmp\n!keep.log\n/out/\n" });
    await until("sub/.ferryignore on the server", () => serverHasFile(ws, "sub/.ferryignore"));
    writeTree(dir, {
      "a.tmp": "not under sub\n",
      "sub/a.tmp": "ignored by sub\n",
      "sub/x.log": "ignored by the root\n",
      "sub/keep.log": "kept by sub's negation\n",
      "sub/out/o.txt": "anchored to sub\n",
      "sub/deeper/out/o.txt": "not sub/out\n",
    });
    await settledPastFullScan(ws, dir);
    const held = async (path: string) => [path, await serverHasFile(ws, path)];
    expect(await Promise.all(["a.tmp", "sub/keep.log", "sub/deeper/out/o.txt"].map(held))).toEqual([
      ["a.tmp", true],
      ["sub/keep.log", true],
      ["sub/deeper/out/o.txt", true],
    ]);
    expect(await Promise.all(["sub/a.tmp", "sub/x.log", "sub/out/o.txt"].map(held))).toEqual([
      ["sub/a.tmp", false],
      ["sub/x.log", false],
      ["sub/out/o.txt", false],
    ]);
  });

  it("never deletes on other hosts a path that became ignored", async () => {
    const ws = newWorkspace();
    const a = tempDir("a");
    const b = tempDir("b");
    writeTree(a, { "notes.log": "shared once\n", "build/out.js": "built\n", "seed.txt": "seed\n" });
    await startWatch(a, cliEnv(ws));
    await startWatch(b, cliEnv(ws));
    await until("build/out.js on b", () => existsSync(join(b, "build/out.js")));
    writeFileSync(join(a, ".ferryignore"), "*.log\nbuild/\n");
    await until(".ferryignore on b", () => existsSync(join(b, ".ferryignore")));
    rmSync(join(a, "build"), { recursive: true });
    rmSync(join(a, "notes.log"));
    await settledPastFullScan(ws, a);
    await until("the markers on b", () => existsSync(join(b, "marker-2.txt")));
    expect(await serverHasFile(ws, "notes.log")).toBe(true);
    expect(await serverHasFile(ws, "build/out.js")).toBe(true);
    expect(readFileSync(join(b, "notes.log"), "utf8")).toBe("shared once\n");
    expect(readFileSync(join(b, "build/out.js"), "utf8")).toBe("built\n");
  });

  it("pushes a path once it is no longer ignored, and what changes in it after", async () => {
    const ws = newWorkspace();
    const dir = tempDir("a");
    writeTree(dir, {
      ".ferryignore": "*.log\nbuild\n",
      "debug.log": "local\n",
      "build/out.js": "built\n",
      "seed.txt": "seed\n",
    });
    await startWatch(dir, cliEnv(ws));
    await until("seed.txt on the server", () => serverHasFile(ws, "seed.txt"));
    expect(await serverHasFile(ws, "debug.log")).toBe(false);
    writeFileSync(join(dir, ".ferryignore"), "# nothing ignored now\n");
    await until("debug.log on the server", () => serverHasFile(ws, "debug.log"));
    await until("build/out.js on the server", () => serverHasFile(ws, "build/out.js"));
    // The directory the watcher left alone while it was ignored is watched now.
    writeFileSync(join(dir, "build/later.js"), "later\n");
    await until("build/later.js on the server", () => serverHasFile(ws, "build/later.js"));
  });

  it("takes the server's changes it left alone while a path was ignored, once it no longer is", async () => {
    const ws = newWorkspace();
    const env = cliEnv(ws);
    const a = tempDir("a");
    const b = tempDir("b");
    const d = tempDir("d");
    writeTree(a, { "notes.log": "v1\n", "seed.txt": "seed\n" });
    expect(ferry(["push", a], env).status).toBe(0);
    expect(ferry(["pull", d], env).status).toBe(0);
    await startWatch(b, env);
    await until("notes.log on b", () => existsSync(join(b, "notes.log")));
    writeFileSync(join(a, ".ferryignore"), "*.log\n");
    expect(ferry(["push", a], env).status).toBe(0);
    await until(".ferryignore on b", () => existsSync(join(b, ".ferryignore")));
    // d never pulled the rule: its edit reaches the server, and b, which ignores it, leaves it there.
    writeTree(d, { "notes.log": "v2 from d\n", "marker.txt": "m\n" });
    expect(ferry(["push", d], env).status).toBe(0);
    await until("marker.txt on b", () => existsSync(join(b, "marker.txt")));
    expect(readFileSync(join(b, "notes.log"), "utf8")).toBe("v1\n");
    writeFileSync(join(b, ".ferryignore"), "# nothing ignored now\n");
    // b's v1 is a state the server had before: stale, replaced by d's, with no conflict copy.
    await until("d's notes.log on b", () => readFileSync(join(b, "notes.log"), "utf8") === "v2 from d\n");
    await settledPastFullScan(ws, b);
    expect(readdirSync(b).filter((n) => n.includes("conflict"))).toEqual([]);
    expect(ferry(["pull", a], env).status).toBe(0);
    expect(readFileSync(join(a, "notes.log"), "utf8")).toBe("v2 from d\n");
  });
});
