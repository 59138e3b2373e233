/**
 * A host away longer than the tombstone horizon (PROTOCOL.md §4.1, §7.9):
 * its pull cursor is older than the deletions the server dropped, so hello
 * answers `resync`. The server's history is still the one the host saw,
 * so the host's saved states are true: it takes the server's changes to
 * paths it did not touch (no conflict copies), deletes what it had agreed
 * with the server and the server no longer lists, keeps and pushes its own
 * edits, and sends nothing else. The server runs with a zero horizon and
 * history window, as the defaults stand once a host is away 30 days (the
 * 7-day history has expired first).
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, newWorkspace, openHost, TRANSPORTS } from "./support/hosts.ts";
import { writeTree } from "./support/tree.ts";
import { collectNow, serverWithVars } from "./support/vars-server.ts";

afterEach(cleanup);

const server = serverWithVars({ FERRY_TOMBSTONE_HORIZON: "0", FERRY_HISTORY: "0" });

describe.each(TRANSPORTS)("a host back after the tombstone horizon, over $name", ({ factory }) => {
  it("takes the server's edits and deletions without conflict copies, and pushes only its own edit", async () => {
    const ws = newWorkspace();
    const a = openHost(ws, { factory, storeKind: "disk", url: server.url });
    const b = openHost(ws, { factory, storeKind: "disk", url: server.url });
    writeTree(a.root, {
      "keep.txt": "kept\n",
      "edited.txt": "before\n",
      "deleted.txt": "deleted elsewhere\n",
      "mine.txt": "b edits this\n",
      "old/x.txt": "x\n",
    });
    await a.engine.sync();
    await b.engine.sync();

    // While B is away: A edits one file and deletes another and a directory; B edits one of its own.
    writeFileSync(join(a.root, "edited.txt"), "after, by A\n");
    rmSync(join(a.root, "deleted.txt"));
    rmSync(join(a.root, "old"), { recursive: true });
    await a.engine.sync();
    await collectNow(server.url, ws);
    writeFileSync(join(b.root, "mine.txt"), "b edited this while away\n");

    const report = await b.engine.sync();
    expect(report.mode).not.toBe("incremental");
    expect(report.conflicts).toEqual([]);
    expect(readFileSync(join(b.root, "edited.txt"), "utf8")).toBe("after, by A\n");
    expect(existsSync(join(b.root, "deleted.txt"))).toBe(false);
    expect(existsSync(join(b.root, "old"))).toBe(false);
    expect(report.sent.map((c) => c.path)).toEqual(["mine.txt"]);

    await a.engine.sync();
    expect(readFileSync(join(a.root, "mine.txt"), "utf8")).toBe("b edited this while away\n");
    expect(existsSync(join(a.root, "deleted.txt"))).toBe(false);
  });
});
