/**
 * A host keeps its acknowledged tombstones so a reconcile can tell "deleted
 * here" from "never here" (PROTOCOL.md §9.3), but not forever: once the
 * server drops its own past the tombstone horizon (§7.9) and says so at
 * hello (`tombstonesDropped`), the host forgets those up to the same rev,
 * and keeps the newer ones.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, inject, it } from "vitest";
import { startLocalServer } from "../../client/serve/launch.ts";
import { cleanup, newWorkspace, openHost, TRANSPORTS, tempDir } from "./support/hosts.ts";
import { writeTree } from "./support/tree.ts";
import { collectNow } from "./support/vars-server.ts";

afterEach(cleanup);

describe.each(TRANSPORTS)("a host's tombstones over $name", ({ factory }) => {
  it("are forgotten up to the rev the server dropped its own through, and kept after it", async () => {
    // Horizon 0: a collection drops every tombstone the workspace holds.
    const server = await startLocalServer({
      dataDir: tempDir("horizon"),
      port: 0,
      secret: inject("ferrySecret"),
      vars: { FERRY_TOMBSTONE_HORIZON: "0" },
    });
    try {
      const ws = newWorkspace();
      const a = openHost(ws, { factory, storeKind: "disk", url: server.url });
      const b = openHost(ws, { factory, storeKind: "disk", url: server.url });
      writeTree(a.root, { "old.txt": "o\n", "taken.txt": "t\n", "new.txt": "n\n" });
      await a.engine.sync();
      await b.engine.sync();
      rmSync(join(a.root, "old.txt"));
      await a.engine.sync();
      rmSync(join(b.root, "taken.txt"));
      await b.engine.sync();
      await a.engine.sync();
      // Pushed by A, and pulled by A from B: both kept while the server keeps its own.
      expect(a.store.get("old.txt")?.entry.kind).toBe("gone");
      expect(a.store.get("taken.txt")?.entry.kind).toBe("gone");

      await collectNow(server.url, ws);
      rmSync(join(a.root, "new.txt"));
      const report = await a.engine.sync();
      expect(report.mode).toBe("incremental");
      expect(a.store.get("old.txt")).toBeUndefined();
      expect(a.store.get("taken.txt")).toBeUndefined();
      // Deleted after the horizon's rev: a reconcile may still need it.
      expect(a.store.get("new.txt")?.entry.kind).toBe("gone");
    } finally {
      await server.stop();
    }
  });
});
