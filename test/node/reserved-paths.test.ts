/**
 * A server that stored one of ferry's own names before push refused them
 * (found by the tester: `.ferry/…` and `.ferry-tmp-*` paths were accepted,
 * and every host then refused them and exited 3 on every later pull). The
 * older server is made here by renaming stored paths in the workspace's
 * own SQLite while the server is stopped. A host skips such a path once,
 * with a warning, and its later pulls finish clean (PROTOCOL.md §3.1, §9.3).
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../client/store/sqlite-store.ts";
import { cliEnv, ferry, ferryRun } from "./support/cli.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";
import { type ServeProcess, startServeProcess } from "./support/serve-process.ts";
import { snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);
const running: ServeProcess[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

/** The SQLite files under `dir` (the workspace objects' storage among them). */
function sqliteFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((p) => p.endsWith(".sqlite"))
    .map((p) => join(dir, p));
}

/** Renames stored paths in whichever object's storage holds them, as a server from before the rule kept them. */
function renameStoredPaths(dataDir: string, renames: Readonly<Record<string, string>>): void {
  let renamed = 0;
  for (const file of sqliteFiles(dataDir)) {
    const db = new Database(file);
    try {
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[];
      if (!tables.includes("entries")) continue;
      for (const [from, to] of Object.entries(renames)) {
        renamed += db.prepare("UPDATE entries SET path = ? WHERE path = ?").run(to, from).changes;
        if (tables.includes("versions")) db.prepare("UPDATE versions SET path = ? WHERE path = ?").run(to, from);
      }
    } finally {
      db.close();
    }
  }
  expect(renamed).toBe(Object.keys(renames).length);
}

describe("a server holding ferry's own names (stored before push refused them)", () => {
  it("has each host skip them once with a warning, and later pulls finish clean", async () => {
    const data = tempDir("reserved-server");
    let server = await startServeProcess(data, { args: ["--no-r2"] });
    running.push(server);
    const ws = newWorkspace();
    const a = tempDir("reserved-a");
    writeTree(a, { "keep.txt": "k\n", "xferry-tmp-1": "t\n", "sub/xferr": "s\n", "sub/ok.txt": "o\n" });
    expect(ferry(["push", a], cliEnv(ws, { FERRY_URL: server.url })).status).toBe(0);
    await server.stop();
    running.splice(0);
    renameStoredPaths(data, { "xferry-tmp-1": ".ferry-tmp-1", "sub/xferr": "sub/.ferry" });
    server = await startServeProcess(data, { args: ["--no-r2"] });
    running.push(server);
    const env = cliEnv(ws, { FERRY_URL: server.url });

    const b = tempDir("reserved-b");
    const first = await ferryRun(["pull", b], env);
    expect(first.status).toBe(3);
    const reason = (name: string) => `'${name}' is reserved for ferry's own files on a host`;
    expect(first.stderr).toContain(`ferry: refused: .ferry-tmp-1: ${reason(".ferry-tmp-1")}`);
    expect(first.stderr).toContain(`ferry: refused: sub/.ferry: ${reason(".ferry")}`);
    expect(Object.keys(snapshot(b)).sort()).toEqual(["keep.txt", "sub", "sub/ok.txt"]);
    expect(existsSync(join(b, "sub", ".ferry"))).toBe(false);

    for (let i = 0; i < 2; i++) {
      const later = await ferryRun(["pull", b], env);
      expect([later.status, later.stderr]).toEqual([0, ""]);
    }
    const synced = await ferryRun(["sync", b], env);
    expect([synced.status, synced.stderr]).toEqual([0, ""]);

    // A host from before the rule kept its refusal, to try again at every pull: it goes, said once more.
    const store = openStore("disk", b);
    store.defer({ change: { kind: "dir", path: "sub/.ferry", mode: 0o755, mtime: 0, rev: 1 }, reason: "reserved" });
    store.close();
    const dropped = await ferryRun(["pull", b], env);
    expect([dropped.status, dropped.stderr]).toEqual([
      3,
      `ferry: refused: sub/.ferry: ${reason(".ferry")}: not tried again\n`,
    ]);
    const after = await ferryRun(["pull", b], env);
    expect([after.status, after.stderr]).toEqual([0, ""]);
  });
});
