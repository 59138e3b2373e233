/**
 * Issue 9 cases 4 and 5, end to end: a server whose storage is restored from
 * an older copy, then moves on (other hosts push until its rev passes a
 * host's saved cursor), must not be resumed in the wrong history: the rev
 * identity at the host's cursor differs, hello answers `resync`, and the host
 * reconciles (PROTOCOL.md §4.1, §9.3). Files the host deleted and saw
 * acknowledged stay deleted (it keeps its tombstones).
 */
import { cpSync, existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, newWorkspace, openHost, TRANSPORTS, tempDir } from "./support/hosts.ts";
import { RestartableServer } from "./support/restartable-server.ts";
import { snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);

const read = (root: string, path: string) => readFileSync(join(root, path), "utf8");

/**
 * A server of the test's own whose storage can be copied aside (`backup`)
 * and copied back over what it has become (`restore`), each a stop and a
 * start at the same address, as a restore from a backup is.
 */
async function restorableServer() {
  const persist = tempDir("restored-server");
  const data = join(persist, "data");
  const copy = join(persist, "backup");
  const server = await RestartableServer.start(data);
  return {
    url: server.url,
    async backup(): Promise<void> {
      await server.stop();
      cpSync(data, copy, { recursive: true });
      await server.restart(data);
    },
    async restore(): Promise<void> {
      await server.stop();
      rmSync(data, { recursive: true, force: true });
      cpSync(copy, data, { recursive: true });
      await server.restart(data);
    },
    stop: () => server.close(),
  };
}

describe.each(TRANSPORTS)("a server restored from an older copy over $name", ({ factory }) => {
  it("keeps a deletion the restore lost deleted on every host (the hosts keep their tombstones)", async () => {
    const server = await restorableServer();
    try {
      const ws = newWorkspace();
      const url = server.url;
      const a = openHost(ws, { factory, storeKind: "disk", url });
      const b = openHost(ws, { factory, storeKind: "disk", url });
      writeTree(a.root, { "keep.txt": "k\n", "deleted.txt": "d\n" });
      await a.engine.sync();
      await b.engine.sync();
      await server.backup();
      rmSync(join(a.root, "deleted.txt"));
      await a.engine.sync();
      await b.engine.sync();
      // Restored to before the deletion: both hosts' cursors are now ahead of the server.
      await server.restore();

      expect((await b.engine.sync()).mode).toBe("resync");
      expect(existsSync(join(b.root, "deleted.txt"))).toBe(false);
      await a.engine.sync();
      expect(existsSync(join(a.root, "deleted.txt"))).toBe(false);
      const fresh = openHost(ws, { factory, storeKind: "memory", url });
      await fresh.engine.sync();
      expect(existsSync(join(fresh.root, "deleted.txt"))).toBe(false);
      expect(read(fresh.root, "keep.txt")).toBe("k\n");
    } finally {
      await server.stop();
    }
  });

  it("sends a host whose cursor the restored server moved past to reconcile, and deleted files stay deleted", async () => {
    const server = await restorableServer();
    try {
      const ws = newWorkspace();
      const url = server.url;
      const a = openHost(ws, { factory, storeKind: "disk", url });
      const b = openHost(ws, { factory, storeKind: "disk", url });
      writeTree(a.root, { "keep.txt": "k\n", "deleted.txt": "d\n" });
      await a.engine.sync();
      await b.engine.sync();

      // The backup: the storage as it is now.
      await server.backup();

      // After the backup: A deletes a file and B takes the deletion (both acknowledged).
      rmSync(join(a.root, "deleted.txt"));
      writeTree(a.root, { "lost-edit.txt": "made after the backup\n" });
      await a.engine.sync();
      await b.engine.sync();
      expect(existsSync(join(b.root, "deleted.txt"))).toBe(false);
      const cursor = b.store.position().pull?.cursor.rev ?? 0;

      // The restore, then a new host pushes until the rev passes B's cursor.
      await server.restore();
      const c = openHost(ws, { factory, storeKind: "disk", url });
      await c.engine.sync();
      for (let i = 0; i <= cursor; i++) {
        writeTree(c.root, { [`after-restore-${i}.txt`]: `c ${i}\n` });
        await c.engine.sync();
      }

      const report = await b.engine.sync();
      expect(report.mode).toBe("resync");
      for (let i = 0; i <= cursor; i++) expect(read(b.root, `after-restore-${i}.txt`)).toBe(`c ${i}\n`);
      expect(existsSync(join(b.root, "deleted.txt"))).toBe(false);
      await a.engine.sync();
      await c.engine.sync();
      expect(existsSync(join(a.root, "deleted.txt"))).toBe(false);
      expect(existsSync(join(c.root, "deleted.txt"))).toBe(false);
      // What the restore lost comes back from the hosts that had it.
      expect(read(c.root, "lost-edit.txt")).toBe("made after the backup\n");
      await b.engine.sync();
      expect(snapshot(a.root)).toEqual(snapshot(b.root));
      expect(snapshot(a.root)).toEqual(snapshot(c.root));
    } finally {
      await server.stop();
    }
  });
});

describe("a server restored from an older copy, then written by another host", () => {
  it("keeps both versions of a file the restore lost and another host saved again after it", async () => {
    const server = await restorableServer();
    try {
      const ws = newWorkspace();
      const url = server.url;
      const factory = (TRANSPORTS[0] as (typeof TRANSPORTS)[0]).factory;
      const b = openHost(ws, { factory, storeKind: "disk", url });
      writeTree(b.root, { "notes.txt": "v1\n" });
      await b.engine.sync();
      await server.backup();
      // B's edit is acknowledged, then lost with the restore.
      writeTree(b.root, { "notes.txt": "b's edit, lost by the restore\n" });
      await b.engine.sync();
      await server.restore();
      // C edits the restored v1 (saved after B's edit) and pushes it.
      const c = openHost(ws, { factory, storeKind: "disk", url });
      await c.engine.sync();
      writeTree(c.root, { "notes.txt": "c's edit, after the restore\n" });
      await c.engine.sync();

      const report = await b.engine.sync();
      expect(report.mode).toBe("resync");
      expect(report.conflicts.map((x) => x.path)).toEqual(["notes.txt"]);
      expect(read(b.root, "notes.txt")).toBe("c's edit, after the restore\n");
      expect(read(b.root, (report.conflicts[0] as { copy: string }).copy)).toBe("b's edit, lost by the restore\n");
      await c.engine.sync();
      expect(snapshot(c.root)).toEqual(snapshot(b.root));
    } finally {
      await server.stop();
    }
  });
});

describe("a host that stays connected across a server restore", () => {
  const [http, ws] = TRANSPORTS as [(typeof TRANSPORTS)[0], (typeof TRANSPORTS)[0]];

  it("finds at its next pull that its cursor's rev is another history's, and reconciles", async () => {
    const server = await restorableServer();
    const workspace = newWorkspace();
    const url = server.url;
    // A keeps one socket open throughout, as `ferry sync --watch` does; the others use HTTP.
    const a = openHost(workspace, { factory: ws.factory, storeKind: "disk", url });
    const c = openHost(workspace, { factory: http.factory, storeKind: "disk", url });
    let reconnects = 0;
    let poked = 0;
    const listening = a.engine.transport.listen({
      poked: (rev) => {
        poked = Math.max(poked, rev);
      },
      reconnected: () => reconnects++,
    });
    try {
      writeTree(c.root, { "first.txt": "1\n" });
      await c.engine.sync();
      await a.engine.sync();
      await server.backup();
      await vi.waitFor(() => expect(reconnects).toBe(1), { timeout: 30_000, interval: 50 });
      writeTree(c.root, { "second.txt": "2\n" });
      await c.engine.sync();
      await a.engine.sync();
      expect(a.store.position().pull?.cursor).toEqual({ rev: 2, path: null });

      // Restored to rev 1; another host then pushes revs 2 and 3, which A's socket hears as pokes.
      await server.restore();
      await vi.waitFor(() => expect(reconnects).toBe(2), { timeout: 30_000, interval: 50 });
      const d = openHost(workspace, { factory: http.factory, storeKind: "memory", url });
      writeTree(d.root, { "after-1.txt": "d1\n" });
      await d.engine.sync();
      writeTree(d.root, { "after-2.txt": "d2\n" });
      await d.engine.sync();
      await vi.waitFor(() => expect(poked).toBe(3), { timeout: 10_000, interval: 20 });

      // Rev 2 is now after-1.txt: resuming after A's old rev 2 would miss it for good.
      const report = await a.engine.sync();
      expect(report.mode).toBe("resync");
      expect(read(a.root, "after-1.txt")).toBe("d1\n");
      expect(read(a.root, "after-2.txt")).toBe("d2\n");
      // What the restore lost comes back from the host that had it.
      await d.engine.sync();
      expect(read(d.root, "second.txt")).toBe("2\n");
      await c.engine.sync();
      expect(snapshot(c.root)).toEqual(snapshot(a.root));
      expect(snapshot(d.root)).toEqual(snapshot(a.root));
    } finally {
      listening.stop();
      await server.stop();
    }
  });
});
