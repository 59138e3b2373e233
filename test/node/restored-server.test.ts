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
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, newWorkspace, openHost, TRANSPORTS, tempDir } from "./support/hosts.ts";
import { serverPort, startServer } from "./support/restartable-server.ts";
import { snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);

const read = (root: string, path: string) => readFileSync(join(root, path), "utf8");

describe.each(TRANSPORTS)("a server restored from an older copy over $name", ({ factory }) => {
  it("keeps a deletion the restore lost deleted on every host (the hosts keep their tombstones)", async () => {
    const persist = tempDir("restored-server");
    const data = join(persist, "data");
    const backup = join(persist, "backup");
    const port = await serverPort(persist);
    let server = await startServer(data, port);
    try {
      const ws = newWorkspace();
      const url = server.url;
      const a = openHost(ws, { factory, storeKind: "disk", url });
      const b = openHost(ws, { factory, storeKind: "disk", url });
      writeTree(a.root, { "keep.txt": "k\n", "deleted.txt": "d\n" });
      await a.engine.sync();
      await b.engine.sync();
      await server.stop();
      cpSync(data, backup, { recursive: true });
      server = await startServer(data, port);
      rmSync(join(a.root, "deleted.txt"));
      await a.engine.sync();
      await b.engine.sync();
      // Restored to before the deletion: both hosts' cursors are now ahead of the server.
      await server.stop();
      rmSync(data, { recursive: true, force: true });
      cpSync(backup, data, { recursive: true });
      server = await startServer(data, port);

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
    const persist = tempDir("restored-server");
    const data = join(persist, "data");
    const backup = join(persist, "backup");
    const port = await serverPort(persist);
    let server = await startServer(data, port);
    try {
      const ws = newWorkspace();
      const url = server.url;
      const a = openHost(ws, { factory, storeKind: "disk", url });
      const b = openHost(ws, { factory, storeKind: "disk", url });
      writeTree(a.root, { "keep.txt": "k\n", "deleted.txt": "d\n" });
      await a.engine.sync();
      await b.engine.sync();

      // The backup: the storage as it is now.
      await server.stop();
      cpSync(data, backup, { recursive: true });
      server = await startServer(data, port);

      // After the backup: A deletes a file and B takes the deletion (both acknowledged).
      rmSync(join(a.root, "deleted.txt"));
      writeTree(a.root, { "lost-edit.txt": "made after the backup\n" });
      await a.engine.sync();
      await b.engine.sync();
      expect(existsSync(join(b.root, "deleted.txt"))).toBe(false);
      const cursor = b.store.position().pull?.cursor.rev ?? 0;

      // The restore, then a new host pushes until the rev passes B's cursor.
      await server.stop();
      rmSync(data, { recursive: true, force: true });
      cpSync(backup, data, { recursive: true });
      server = await startServer(data, port);
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
