/**
 * `Workspace.watch` in the library (client/workspace/workspace.ts, engine/watch.ts):
 * its first sync scans the whole tree whether or not the caller asked to
 * hear of it, and the workspace's other operations, called while it
 * watches, take turns with its syncs instead of waiting for it to end.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openWorkspace } from "../../client/workspace/workspace.ts";
import { serverStats } from "./support/cli.ts";
import { cleanup, endpointFor, newWorkspace, tempDir } from "./support/hosts.ts";
import { writeTree } from "./support/tree.ts";

afterEach(cleanup);

describe("Workspace.watch", () => {
  it("starts with a full sync without onStarted, sending what changed before it began", async () => {
    const ws = newWorkspace();
    const dir = tempDir("watch-first");
    writeTree(dir, { "a.txt": "alpha\n" });
    const host = openWorkspace(dir, { ...endpointFor(ws), transport: "http" });
    const stop = new AbortController();
    try {
      await host.sync();
      // Written with no watcher yet: only a full scan finds it (the poll syncs without one).
      writeFileSync(join(dir, "b.txt"), "beta\n");
      const watching = host.watch({ signal: stop.signal, pollMs: 100 });
      const deadline = Date.now() + 20_000;
      while ((await serverStats(ws)).files < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect((await serverStats(ws)).files).toBe(2);
      stop.abort();
      await watching;
    } finally {
      stop.abort();
      await host.close();
    }
  });

  it("runs a sync called while it watches, as a turn between its own syncs", async () => {
    const ws = newWorkspace();
    const dir = tempDir("watch-turn");
    writeTree(dir, { "a.txt": "alpha\n" });
    const host = openWorkspace(dir, { ...endpointFor(ws), transport: "http" });
    const stop = new AbortController();
    try {
      const watching = host.watch({ signal: stop.signal, pollMs: 60_000 });
      writeFileSync(join(dir, "b.txt"), "beta\n");
      const report = await host.sync();
      expect(report.mode).toBeDefined();
      expect((await serverStats(ws)).files).toBe(2);
      const status = await host.status();
      expect([status.toPush.length, status.toPull.length]).toEqual([0, 0]);
      stop.abort();
      await watching;
    } finally {
      stop.abort();
      await host.close();
    }
  });
});
