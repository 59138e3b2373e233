/**
 * Issue 9 case 6, end to end: a host whose store was lost (`--memory` after
 * a restart) reconciles against the server's history (PROTOCOL.md §9.3):
 * a local state the server had before is stale and takes the server's state,
 * deletions included, without a conflict copy; a state the server never had
 * is local work, kept at its path and pushed.
 */
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cliEnv, ferry, json } from "./support/cli.ts";
import { cleanup, newWorkspace, openHost, TRANSPORTS, tempDir } from "./support/hosts.ts";
import { snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);

const read = (root: string, path: string) => readFileSync(join(root, path), "utf8");
const mode = (root: string, path: string) => statSync(join(root, path)).mode & 0o7777;
const conflictCopies = (root: string) => readdirSync(root, { recursive: true }).filter((p) => /conflict/.test(`${p}`));

describe.each(TRANSPORTS)("a host that lost its store over $name", ({ factory }) => {
  /** A (on disk) and B (in memory) share a tree; B's process then ends, so its store is gone. */
  async function sharedThenLost() {
    const ws = newWorkspace();
    const a = openHost(ws, { factory, storeKind: "disk" });
    const b = openHost(ws, { factory, storeKind: "memory" });
    writeTree(a.root, { "keep.txt": "k1\n", "edit.txt": "e1\n", "gone.txt": "g1\n", "dir/gone-too.txt": "d1\n" });
    await a.engine.sync();
    await b.engine.sync();
    await b.close();
    return { ws, a, bRoot: b.root };
  }

  it("takes deletions and edits made elsewhere, and pushes no conflict copy, when it changed nothing", async () => {
    const { ws, a, bRoot } = await sharedThenLost();
    writeFileSync(join(a.root, "edit.txt"), "e2 from a\n");
    rmSync(join(a.root, "gone.txt"));
    rmSync(join(a.root, "dir"), { recursive: true });
    await a.engine.sync();

    const b = openHost(ws, { factory, storeKind: "memory", root: bRoot });
    const report = await b.engine.sync();
    expect(report.conflicts).toEqual([]);
    expect(existsSync(join(bRoot, "gone.txt"))).toBe(false);
    expect(existsSync(join(bRoot, "dir"))).toBe(false);
    expect(read(bRoot, "edit.txt")).toBe("e2 from a\n");
    expect(conflictCopies(bRoot)).toEqual([]);
    await a.engine.sync();
    expect(existsSync(join(a.root, "gone.txt"))).toBe(false);
    expect(conflictCopies(a.root)).toEqual([]);
    expect(snapshot(a.root)).toEqual(snapshot(bRoot));
  });

  it("keeps at their paths the edits it made while its store was lost, and pushes them", async () => {
    const { ws, a, bRoot } = await sharedThenLost();
    writeFileSync(join(a.root, "keep.txt"), "k2 from a\n");
    await a.engine.sync();
    writeFileSync(join(bRoot, "edit.txt"), "e2 made on b while its store was lost\n");
    writeFileSync(join(bRoot, "new.txt"), "new on b\n");

    const b = openHost(ws, { factory, storeKind: "memory", root: bRoot });
    const report = await b.engine.sync();
    expect(report.conflicts).toEqual([]);
    expect(read(bRoot, "edit.txt")).toBe("e2 made on b while its store was lost\n");
    expect(read(bRoot, "keep.txt")).toBe("k2 from a\n");
    await a.engine.sync();
    expect(read(a.root, "edit.txt")).toBe("e2 made on b while its store was lost\n");
    expect(read(a.root, "new.txt")).toBe("new on b\n");
    expect(snapshot(a.root)).toEqual(snapshot(bRoot));
  });

  it("keeps a mode change it made while its store was lost, and takes one made elsewhere", async () => {
    const { ws, a, bRoot } = await sharedThenLost();
    chmodSync(join(a.root, "edit.txt"), 0o600);
    await a.engine.sync();
    chmodSync(join(bRoot, "keep.txt"), 0o700);

    const b = openHost(ws, { factory, storeKind: "memory", root: bRoot });
    const report = await b.engine.sync();
    expect(report.conflicts).toEqual([]);
    expect(mode(bRoot, "keep.txt"), "b's chmod, made while its store was lost").toBe(0o700);
    expect(mode(bRoot, "edit.txt"), "a's chmod: b's mode was the server's before").toBe(0o600);
    await a.engine.sync();
    expect(mode(a.root, "keep.txt")).toBe(0o700);
    expect(conflictCopies(bRoot)).toEqual([]);
    expect(snapshot(a.root)).toEqual(snapshot(bRoot));
  });
});

describe("ferry sync after the store was lost", () => {
  const ago = (root: string, path: string, seconds: number) => {
    const t = new Date(Date.now() - seconds * 1000);
    utimesSync(join(root, path), t, t);
  };

  /**
   * A and B share a tree through the CLI, B with an in-memory store, lost when its process ends (its
   * disk tree and `.ferry/root.db` stay: a directory whose whole `.ferry/` was deleted is a first
   * meeting instead, first-meeting.test.ts).
   */
  function sharedThenLost() {
    const env = cliEnv(newWorkspace());
    const a = tempDir("lost-a");
    const b = tempDir("lost-b");
    writeTree(a, { "keep.txt": "k1\n", "edit.txt": "e1\n", "gone.txt": "g1\n" });
    expect(ferry(["sync", a], env).status).toBe(0);
    expect(ferry(["sync", b, "--memory"], env).status).toBe(0);
    return { env, a, b };
  }

  it("keeps the edits made meanwhile at their paths, and takes what others changed, with no copy", () => {
    const { env, a, b } = sharedThenLost();
    writeFileSync(join(a, "keep.txt"), "k2 from a\n");
    rmSync(join(a, "gone.txt"));
    expect(ferry(["sync", a], env).status).toBe(0);
    writeFileSync(join(b, "edit.txt"), "e2 made on b while its store was lost\n");
    writeFileSync(join(b, "new.txt"), "new on b\n");

    const r = ferry(["sync", b, "--memory", "--json"], env);
    expect(r.status).toBe(0);
    expect(json<{ conflicts: unknown[] }>(r).conflicts).toEqual([]);
    expect(read(b, "edit.txt")).toBe("e2 made on b while its store was lost\n");
    expect(read(b, "keep.txt")).toBe("k2 from a\n");
    expect(existsSync(join(b, "gone.txt"))).toBe(false);
    expect(ferry(["sync", a], env).status).toBe(0);
    expect(read(a, "edit.txt")).toBe("e2 made on b while its store was lost\n");
    expect(read(a, "new.txt")).toBe("new on b\n");
    expect(snapshot(a)).toEqual(snapshot(b));
  });

  it("keeps both versions, as any concurrent edit, when another host saved the path after the local edit", () => {
    const { env, a, b } = sharedThenLost();
    writeFileSync(join(b, "edit.txt"), "b's edit, made first\n");
    ago(b, "edit.txt", 60);
    writeFileSync(join(a, "edit.txt"), "a's edit, made later\n");
    expect(ferry(["sync", a], env).status).toBe(0);

    const r = ferry(["sync", b, "--memory", "--json"], env);
    expect(r.status).toBe(3);
    const conflicts = json<{ conflicts: { path: string; copy: string }[] }>(r).conflicts;
    expect(conflicts.map((c) => c.path)).toEqual(["edit.txt"]);
    const copy = (conflicts[0] as { copy: string }).copy;
    expect(read(b, "edit.txt")).toBe("a's edit, made later\n");
    expect(read(b, copy)).toBe("b's edit, made first\n");
    expect(ferry(["sync", a], env).status).toBe(0);
    expect(read(a, copy)).toBe("b's edit, made first\n");
    expect(snapshot(a)).toEqual(snapshot(b));
  });
});
