import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../client/store/sqlite-store.ts";
import { cliEnv, FERRY_BIN, ferry, ferryAsync, ferryRun, json, serverStats } from "./support/cli.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";
import { snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);

function storeState(dir: string) {
  const store = openStore("disk", dir);
  try {
    return { position: store.position(), records: [...store.all()] };
  } finally {
    store.close();
  }
}

describe("ferry, as command lines go", () => {
  it("prints its version", () => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
    const r = ferry(["--version"], cliEnv("unused"));
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(`${pkg.version}\n`);
  });

  it("changes nothing on either side with --dry-run, and says what would move", async () => {
    const ws = newWorkspace();
    const env = cliEnv(ws);
    const a = tempDir("dry-a");
    writeTree(a, { "one.txt": "1\n" });
    expect(ferry(["push", a], env).status).toBe(0);
    const b = tempDir("dry-b");
    writeTree(b, { "two.txt": "2\n" });
    expect(ferry(["sync", b], env).status).toBe(0);
    writeTree(a, { "three.txt": "3\n" });

    const server = await serverSide(ws);
    const tree = snapshot(a);
    const store = storeState(a);
    const pushed = ferry(["push", a, "--dry-run"], env);
    expect(pushed.status).toBe(0);
    expect(pushed.stdout).toContain("  push  file    three.txt");
    expect(pushed.stdout).not.toContain("two.txt");
    const synced = json<{ toPush: { path: string }[]; toPull: { path: string }[] }>(
      ferry(["sync", a, "--dry-run", "--json"], env),
    );
    expect(synced.toPush.map((c) => c.path)).toEqual(["three.txt"]);
    expect(synced.toPull.map((c) => c.path)).toEqual(["two.txt"]);
    expect(ferry(["pull", a, "--dry-run"], env).stdout).toContain("  pull  file    two.txt");

    expect(await serverSide(ws)).toEqual(server);
    expect(snapshot(a)).toEqual(tree);
    expect(storeState(a)).toEqual(store);

    // A directory never synced is left without a store, and the server records no host for it.
    const fresh = tempDir("dry-fresh");
    writeTree(fresh, { "x.txt": "x\n" });
    for (const verb of ["push", "pull", "sync"]) expect(ferry([verb, fresh, "--dry-run"], env).status).toBe(0);
    expect(ferry(["status", fresh], env).status).toBe(0);
    expect(readdir(fresh)).toEqual(["x.txt"]);
    // A pull into a directory not made yet says what it would bring, and makes nothing.
    const missing = join(tempDir("dry-missing"), "copy");
    const into = ferry(["pull", missing, "--dry-run"], env);
    expect(into.status).toBe(0);
    expect(into.stdout).toContain("  pull  file    two.txt");
    expect(existsSync(missing)).toBe(false);
    expect(await serverSide(ws)).toEqual(server);
  });

  it("lists the first 50 paths of a status, and every path with -v", () => {
    const ws = newWorkspace();
    const dir = tempDir("status-cap");
    const files: Record<string, string> = {};
    for (let i = 0; i < 60; i++) files[`f${String(i).padStart(2, "0")}.txt`] = `${i}\n`;
    writeTree(dir, files);
    const short = ferry(["status", dir], cliEnv(ws));
    expect(short.status).toBe(0);
    expect(short.stdout).toContain("60 to push, 0 to pull");
    expect(short.stdout).toContain("  push  file    f49.txt");
    expect(short.stdout).not.toContain("f50.txt");
    expect(short.stdout).toContain("  … and 10 more to push (-v lists every path)");
    const all = ferry(["status", dir, "-v"], cliEnv(ws));
    expect(all.stdout).toContain("  push  file    f59.txt");
    expect(all.stdout).not.toContain("more to push");
    // --json always carries every path.
    expect(json<{ toPush: unknown[] }>(ferry(["status", dir, "--json"], cliEnv(ws))).toPush).toHaveLength(60);
  });

  it("lists every path moved with -v, and prints errors only with -q", () => {
    const ws = newWorkspace();
    const dir = tempDir("verbosity");
    writeTree(dir, { "a.txt": "a\n", "d/b.txt": "b\n" });
    const loud = ferry(["push", dir, "-v"], cliEnv(ws));
    expect(loud.status).toBe(0);
    expect(loud.stdout.split("\n")).toEqual([
      "  sent      file    a.txt",
      "  sent      dir     d",
      "  sent      file    d/b.txt",
      expect.stringMatching(/^ferry pushed: sent 3 entries /),
      "",
    ]);
    const copy = tempDir("verbosity-copy");
    expect(ferry(["pull", copy, "-v"], cliEnv(ws)).stdout).toContain("  received  file    d/b.txt\n");

    // -q: nothing on success, but a path left behind is still said (someone must act on it), and errors.
    execFileSync("mkfifo", [join(dir, "pipe")]);
    writeTree(dir, { "c.txt": "c\n" });
    const skipped = ferry(["push", dir, "-q"], cliEnv(ws));
    expect(skipped).toMatchObject({ status: 3, stdout: "" });
    expect(skipped.stderr).toMatch(/^ferry: skipped: pipe: [^\n]+\n$/);
    expect(ferry(["pull", copy, "-q"], cliEnv(ws))).toEqual({ status: 0, stdout: "", stderr: "" });
    const refused = ferry(["pull", copy, "-q", "-w", newWorkspace()], cliEnv(ws));
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/^ferry: bound_elsewhere: /);
  });

  it("exits 3 when a sync is done but left a path behind", () => {
    const ws = newWorkspace();
    const dir = tempDir("exit3");
    writeTree(dir, { "a.txt": "a\n" });
    execFileSync("mkfifo", [join(dir, "pipe")]);
    const r = ferry(["push", dir], cliEnv(ws));
    expect(r.stderr).toMatch(/^ferry: skipped: pipe: /m);
    expect(r.status).toBe(3);
    expect(ferry(["push", dir, "--json"], cliEnv(ws)).status).toBe(3);
  });

  it("exits 2 for usage errors, with one line", () => {
    const env = cliEnv(newWorkspace());
    const dir = tempDir("usage");
    for (const args of [
      ["frobnicate"],
      ["push"],
      ["push", dir, "--transport", "carrier-pigeon"],
      ["push", dir, "--url", "localhost:8787"],
    ]) {
      const r = ferry(args, env);
      expect(r.status, args.join(" ")).toBe(2);
    }
    const r = ferry(["push", dir, "--url", "localhost:8787"], env);
    expect(r.stderr).toBe(
      "ferry: usage: 'localhost:8787' is not an http:// or https:// URL (for a local server: http://127.0.0.1:8787)\n",
    );
  });

  it("says in one line that a directory is missing", () => {
    const r = ferry(["push", "/nonexistent/ferry-dir"], cliEnv(newWorkspace()));
    expect(r.status).toBe(1);
    expect(r.stderr).toBe("ferry: not_a_directory: /nonexistent/ferry-dir does not exist\n");
  });

  it("says in one line, at once, that a server is not a ferry server", async () => {
    let hits = 0;
    const server = createServer((_req, res) => {
      hits++;
      res.writeHead(501, { "content-type": "text/html" }).end("<html><body>Not Implemented</body></html>");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const r = await ferryRun(["push", tempDir("not-ferry"), "--url", url], cliEnv(newWorkspace()));
      expect(r.status).toBe(1);
      expect(r.stderr).toBe(
        `ferry: not_ferry: ${url} is not a ferry server (it answered HTTP 501 with text/html, not CBOR)\n`,
      );
      expect(hits).toBe(1);
    } finally {
      server.close();
    }
  });

  it("ends quietly when its reader goes away", () => {
    const ws = newWorkspace();
    const dir = tempDir("epipe");
    const files: Record<string, string> = {};
    // More lines than a pipe holds (64 KiB), so ferry is still writing when `head` has gone.
    for (let i = 0; i < 5000; i++) files[`some/longer/directory/name/f${i}.txt`] = `${i}\n`;
    writeTree(dir, files);
    const r = spawnSync("sh", ["-c", `"${process.execPath}" "${FERRY_BIN}" status "${dir}" | head -2`], {
      env: cliEnv(ws),
      encoding: "utf8",
    });
    expect(r.stdout.split("\n").length).toBe(3);
    expect(r.stderr).toBe("");
  });

  it("takes one pattern per --ignore, so the directory after it stays the directory", () => {
    const ws = newWorkspace();
    const dir = tempDir("ignore");
    writeTree(dir, { "keep.txt": "k\n", "drop.log": "d\n", ".git/HEAD": "ref\n", ".hg/x": "x\n" });
    const r = ferry(["push", "--ignore", "*.log", "--ignore-vcs", dir, "--json"], cliEnv(ws));
    expect(r.status).toBe(0);
    const dst = tempDir("ignore-dst");
    expect(ferry(["pull", dst], cliEnv(ws)).status).toBe(0);
    expect(Object.keys(snapshot(dst))).toEqual(["keep.txt"]);
  });

  it("holds the directory's lock with --memory too", async () => {
    const ws = newWorkspace();
    const dir = tempDir("memory-lock");
    writeTree(dir, { "a.txt": "a\n" });
    // A watch holds the directory; a --memory push of it is refused.
    const watcher = ferryAsync(["sync", dir, "--watch", "--json"], cliEnv(ws));
    try {
      await new Promise<void>((resolve) => watcher.stdout?.once("data", () => resolve()));
      const r = ferry(["push", dir, "--memory"], cliEnv(ws));
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(/^ferry: store_locked: /);
    } finally {
      watcher.kill("SIGINT");
      await new Promise((resolve) => watcher.on("close", resolve));
    }
  });
});

/** What a look must leave as it was on the server: the rev, and the hosts with their labels. */
async function serverSide(ws: string) {
  const stats = (await serverStats(ws)) as unknown as { rev: number; hosts: { label?: string }[] };
  return { rev: stats.rev, labels: stats.hosts.map((h) => h.label).sort() };
}

function readdir(dir: string): string[] {
  return Object.keys(snapshot(dir));
}
