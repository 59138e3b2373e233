import { spawnSync } from "node:child_process";
import { once } from "node:events";
import { cpSync, readdirSync, readFileSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, inject, it } from "vitest";
import { openStore } from "../../client/store/sqlite-store.ts";
import { verifyToken } from "../../protocol/token.ts";
import { cliEnv, FERRY_BIN, ferry, ferryAsync, json, serverStats } from "./support/cli.ts";
import { cleanup, endpointFor, newWorkspace, tempDir } from "./support/hosts.ts";
import { pastRacyWindow, snapshot, symlink, writeTree } from "./support/tree.ts";

afterEach(cleanup);

interface Report {
  roundTrips: number;
  entriesSent: number;
  entriesReceived: number;
  objectBytesSent: number;
  objectBytesReceived: number;
  resumedFrom: { rev: number };
  workspace: string;
}

describe("ferry CLI", () => {
  it("pushes, pulls into an empty dir, and resyncs nothing, with --json", () => {
    const ws = newWorkspace();
    const env = cliEnv(ws);
    const src = tempDir("cli-src");
    writeTree(src, { "a.txt": "alpha\n", "sub/b.txt": "beta\n" });
    symlink(src, "sub/link", "../a.txt");
    const pushed = json<Report>(ferry(["push", src, "--json"], env));
    expect(pushed.workspace).toBe(ws);
    expect(pushed.entriesSent).toBe(4);

    const dst = tempDir("cli-dst");
    const pulled = ferry(["pull", dst, "--json"], env);
    expect(pulled.status).toBe(0);
    expect(json<Report>(pulled).entriesReceived).toBe(4);
    expect(snapshot(dst)).toEqual(snapshot(src));

    const again = json<Report>(ferry(["sync", src, "--json"], env));
    expect([again.roundTrips, again.entriesSent, again.entriesReceived, again.objectBytesSent]).toEqual([1, 0, 0, 0]);
  });

  it("prints a one-line summary without --json", () => {
    const ws = newWorkspace();
    const src = tempDir("cli-src");
    writeTree(src, { "a.txt": "alpha\n" });
    const r = ferry(["sync", src], cliEnv(ws));
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^ferry synced: sent 1 entry \(6 B\), received 0 entries \(0 B\), \d+ round trips, .+\n$/);
  });

  it("shows what a sync would send in status", () => {
    const ws = newWorkspace();
    const src = tempDir("cli-src");
    writeTree(src, { "one.txt": "1\n" });
    const status = json<{ toPush: { path: string }[]; toPull: unknown[] }>(
      ferry(["status", src, "--json"], cliEnv(ws)),
    );
    expect(status.toPush.map((c) => c.path)).toEqual(["one.txt"]);
    expect(status.toPull).toEqual([]);
  });

  it("fails with one line naming the error code, and a non-zero exit", () => {
    const ws = newWorkspace();
    const src = tempDir("cli-src");
    const badToken = ferry(["push", src, "--token", "ferry1.forged.token"], cliEnv(ws));
    expect(badToken.status).toBe(1);
    expect(badToken.stderr).toMatch(/^ferry: unauthorized: [^\n]+\n$/);

    writeTree(src, { "x.txt": "x\n" });
    const readOnly = endpointFor(ws, "r").token;
    const forbidden = ferry(["push", src, "--json", "--token", readOnly], cliEnv(ws));
    expect(forbidden.status).toBe(1);
    expect(json<{ error: { code: string } }>(forbidden).error.code).toBe("forbidden");

    const noDir = ferry(["push", `${src}/missing`], cliEnv(ws));
    expect(noDir.status).toBe(1);
    expect(noDir.stderr).toMatch(/^ferry: not_a_directory: /);

    // A directory never synced, with nothing naming a workspace (src remembers the one its hello answered).
    const noWorkspace = ferry(["push", tempDir("cli-unnamed")], { ...cliEnv(ws), FERRY_WORKSPACE: "" });
    expect(noWorkspace.status).toBe(2);
    expect(noWorkspace.stderr).toMatch(/^ferry: usage: /);

    expect(ferry(["frobnicate"], cliEnv(ws)).status).toBe(2);
  });

  it("leaves a sync's write-ahead log to the store's next open, which finds every change the sync recorded", () => {
    const ws = newWorkspace();
    const env = cliEnv(ws);
    const src = tempDir("cli-wal");
    writeTree(src, { "a.txt": "alpha\n", "sub/b.txt": "beta\n" });
    expect(json<Report>(ferry(["sync", src, "--json"], env)).entriesSent).toBe(3);
    // Not checkpointed at exit (two fsyncs a command): what the sync wrote is still in the log.
    const wal = join(src, ".ferry", "store.db-wal");
    expect(statSync(wal).size).toBeGreaterThan(0);

    writeFileSync(join(src, "a.txt"), "alpha 2\n");
    const changed = json<Report>(ferry(["sync", src, "--json"], env));
    expect([changed.roundTrips, changed.entriesSent]).toEqual([2, 1]);
    const again = json<Report>(ferry(["sync", src, "--json"], env));
    expect([again.roundTrips, again.entriesSent, again.entriesReceived]).toEqual([1, 0, 0]);

    // What another opener makes of it: a whole database (SQLite replays the log).
    const db = new Database(join(src, ".ferry", "store.db"));
    try {
      expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
      expect((db.prepare("SELECT count(*) AS n FROM paths").get() as { n: number }).n).toBe(3);
    } finally {
      db.close();
    }
  });

  it("keeps a no-op sync's fingerprints for the next sync, which still finds a same-size rewrite", async () => {
    const ws = newWorkspace();
    const env = cliEnv(ws);
    const src = tempDir("cli-kept");
    writeTree(src, { "a.txt": "alpha\n", "sub/b.txt": "beta\n" });
    // Older than the racy window, so that every fingerprint is trusted at once.
    const past = (path: string, seconds: number) => utimesSync(join(src, path), seconds, seconds);
    past("a.txt", 1_700_000_000);
    past("sub/b.txt", 1_700_000_000);
    // A ctime cannot be set back: the racy window is waited out instead.
    await pastRacyWindow();
    const kept = () => {
      const db = new Database(join(src, ".ferry", "store.db"));
      try {
        return db.prepare("SELECT rows FROM scan_rows").pluck().all();
      } finally {
        db.close();
      }
    };
    const sync = () => {
      const r = json<Report>(ferry(["sync", src, "--json"], env));
      return [r.roundTrips, r.entriesSent];
    };
    expect(sync()).toEqual([2, 3]);
    expect(sync()).toEqual([1, 0]);
    expect(kept()).toEqual([expect.stringContaining("sub/b.txt")]);
    expect(sync()).toEqual([1, 0]);

    // Same size, another mtime: the kept rows are the store's, and the store's say it moved.
    writeFileSync(join(src, "a.txt"), "ALPHA\n");
    past("a.txt", 1_700_000_100);
    await pastRacyWindow();
    expect(sync()).toEqual([2, 1]);
    expect(kept()).toEqual([]);
    expect(sync()).toEqual([1, 0]);
    expect(kept()).toHaveLength(1);
    expect(sync()).toEqual([1, 0]);
  });

  it("refuses a store another process holds", () => {
    const ws = newWorkspace();
    const src = tempDir("cli-src");
    const held = openStore("disk", src);
    try {
      const r = ferry(["push", src], cliEnv(ws));
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(/^ferry: store_locked: the store .* is in use by another ferry process\n$/);
    } finally {
      held.close();
    }
  });

  it("mints tokens the server's secret verifies", () => {
    const r = ferry(["token", "team-*", "--read-only", "--ttl", "2h", "--json"], cliEnv("unused"));
    expect(r.status).toBe(0);
    const { token, exp } = json<{ token: string; exp: number }>(r);
    const claims = verifyToken(token, inject("ferrySecret"), "team-a", Math.floor(Date.now() / 1000));
    expect(claims).toMatchObject({ ws: "team-*", rights: "r" });
    expect(exp - Date.now() / 1000).toBeGreaterThan(7100);
  });

  it("resumes a push killed mid-way at the server's acked, applying nothing twice", async () => {
    const ws = newWorkspace();
    const src = tempDir("cli-kill");
    const files: Record<string, string> = {};
    for (let d = 0; d < 20; d++) for (let f = 0; f < 20; f++) files[`d${d}/f${f}.txt`] = `dir ${d} file ${f}\n`;
    writeTree(src, files);
    const total = 420; // 400 files and 20 dirs
    const env = cliEnv(ws, { FERRY_PACK_ENTRIES: "10" });

    const child = ferryAsync(["push", src], env);
    const exited = once(child, "exit");
    for (let i = 0; i < 600 && (await serverStats(ws)).rev < 5; i++) await new Promise((r) => setTimeout(r, 25));
    child.kill("SIGKILL");
    await exited;
    await new Promise((r) => setTimeout(r, 200)); // a request in flight when killed may still land

    const resumed = json<Report>(ferry(["push", src, "--json"], env));
    expect(resumed.resumedFrom.rev).toBeGreaterThanOrEqual(40);
    expect(resumed.resumedFrom.rev).toBeLessThan(total);
    expect(resumed.entriesSent).toBe(total - resumed.resumedFrom.rev);
    // One rev per pack of 10: a pack applied twice would take another.
    expect((await serverStats(ws)).rev).toBe(total / 10);

    const dst = tempDir("cli-kill-dst");
    expect(ferry(["pull", dst], env).status).toBe(0);
    expect(snapshot(dst)).toEqual(snapshot(src));
  });
});

describe("ferry CLI start", () => {
  it("loads node:crypto only when it hashes (a sync with nothing to read does without it), and perf_hooks never", async () => {
    const ws = newWorkspace();
    const src = tempDir("cli-crypto");
    writeTree(src, { "a.txt": "alpha\n", "sub/b.txt": "beta\n" });
    // Written long ago: a file modified just now is read again by the next scan (racily clean).
    for (const file of ["a.txt", "sub/b.txt"]) utimesSync(join(src, file), 1_000_000, 1_000_000);
    // ... and its ctime too, which only waiting ages.
    await pastRacyWindow();
    const dir = tempDir("cli-crypto-preload");
    const preload = join(dir, "report.cjs");
    const report = join(dir, "loaded.txt");
    writeFileSync(
      preload,
      `process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(report)},
         ["crypto", "perf_hooks"].filter((m) => process.moduleLoadList.includes("NativeModule " + m)).join()));`,
    );
    const env = cliEnv(ws, { NODE_OPTIONS: `--require ${preload}` });
    const loaded = (args: string[]) => {
      expect(ferry(args, env).status).toBe(0);
      return readFileSync(report, "utf8");
    };
    // A first push hashes its files (and the report sees the module when it is loaded).
    expect(loaded(["push", src])).toBe("crypto");
    expect(loaded(["sync", src])).toBe("");
    expect(loaded(["status", src])).toBe("");
  });

  it("keeps V8's code cache beside the bundle, and compiles again past a corrupt one or a rewritten chunk", () => {
    // A copy of the launcher and the bundle, so this test owns its cache folder.
    const root = tempDir("cli-code-cache");
    const repo = dirname(dirname(FERRY_BIN));
    cpSync(join(repo, "bin"), join(root, "bin"), { recursive: true });
    const cacheDir = join(root, "dist", "cli", ".v8-cache");
    cpSync(join(repo, "dist", "cli"), join(root, "dist", "cli"), {
      recursive: true,
      filter: (from) => !from.includes(".v8-cache"),
    });
    symlinkSync(join(repo, "node_modules"), join(root, "node_modules"));
    // Every chunk with the fixed mtime npm gives a package's files.
    const chunks = join(root, "dist", "cli", "chunks");
    const NPM_MTIME = new Date("1985-10-26T08:15:00Z");
    for (const f of readdirSync(chunks)) utimesSync(join(chunks, f), NPM_MTIME, NPM_MTIME);
    const env = cliEnv(newWorkspace());
    const run = (args: string[]) => {
      const r = spawnSync(process.execPath, [join(root, "bin", "ferry.cjs"), ...args], { env, encoding: "utf8" });
      expect(r.stderr).toBe("");
      expect(r.status).toBe(0);
      return r.stdout;
    };
    // Each cache file's bytes and mtime: a cache V8 took is not written again.
    const cached = () =>
      new Map(
        readdirSync(cacheDir).map((f) => [f, [statSync(join(cacheDir, f)).mtimeMs, readFileSync(join(cacheDir, f))]]),
      );

    const help = run(["--help"]);
    const first = cached();
    // Named by the flags the launcher set: `--help` runs with V8's defaults.
    expect([...first.keys()].filter((f) => f.startsWith("ferry.cjs.")).map((f) => f.split(".").pop())).toEqual([
      "plain",
    ]);
    expect(run(["--help"])).toBe(help);
    expect(cached()).toEqual(first);

    const [victim] = [...first.keys()].filter((f) => f.startsWith("program-"));
    writeFileSync(join(cacheDir, victim as string), "not a code cache");
    expect(run(["--help"])).toBe(help);
    const again = readFileSync(join(cacheDir, victim as string));
    expect(again.toString()).not.toBe("not a code cache");
    expect(again.byteLength).toBeGreaterThan(1000);

    // A chunk rewritten in place, same length and mtime (another version of the package, unpacked
    // over this one): its old cache is not taken, or V8 would run the old chunk's code.
    // (The program's own description, which lives in that chunk; commander's words live in theirs.)
    const program = join(chunks, `${(victim as string).split(".cjs.")[0]}.cjs`);
    const [was, now] = ["Keep a directory in sync", "Keep a directorz in sync"];
    expect(help).toContain(was);
    writeFileSync(program, readFileSync(program, "utf8").replaceAll(was, now));
    utimesSync(program, NPM_MTIME, NPM_MTIME);
    expect(run(["--help"])).toBe(help.replaceAll(was, now));

    // A command that scans sets V8's interrupt budget: its cache is kept apart.
    const src = tempDir("cli-code-cache-src");
    writeTree(src, { "a.txt": "alpha\n" });
    expect(JSON.parse(run(["push", src, "--json"])).entriesSent).toBe(1);
    expect(
      readdirSync(cacheDir)
        .filter((f) => f.startsWith("ferry.cjs."))
        .map((f) => f.split(".").pop())
        .sort(),
    ).toEqual(["budget", "plain"]);
  });

  it("shows a verb's help, and every command's for a mistyped verb", () => {
    const help = ferry(["sync", "--help"], cliEnv(newWorkspace()));
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage: ferry sync \[options\] <dir>/);
    for (const option of ["--watch", "--interval", "--dry-run", "--ignore", "--transport"])
      expect(help.stdout).toContain(option);
    const typo = ferry(["synk", "dir"], cliEnv(newWorkspace()));
    expect(typo.status).not.toBe(0);
    expect(typo.stderr).toContain("unknown command 'synk'");
    expect(typo.stderr).toContain("(Did you mean sync?)");
  });
});
