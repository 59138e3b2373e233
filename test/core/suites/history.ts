/**
 * The history tables (schema migration 3) as push writes them: one `revs`
 * row per committed rev, and a `versions` row for every live state an
 * accepted pack replaced.
 */

import { describe, expect, it } from "vitest";
import { toHex } from "../../../protocol/hash.ts";
import type { CoreWorkspace } from "../harness.ts";
import { dir, freshWorkspace, gone, ok, refused, smallFile, symlink, TestHost } from "../helpers.ts";

type RevRow = { rev: number; at: number; host: string; id: Uint8Array; entries: number };
type VersionRow = { path: string; rev: number; until_rev: number; kind: string; size: number | null };

function history(ws: CoreWorkspace): Promise<{ revs: RevRow[]; versions: VersionRow[] }> {
  return ws.withDb((ctx) => ({
    revs: ctx.db
      .exec<{ rev: number; at: number; host: Uint8Array; id: Uint8Array; entries: number }>(
        `SELECT rev, at, host, id, entries FROM revs ORDER BY rev`,
      )
      .rows.map((r) => ({ ...r, host: toHex(r.host) })),
    versions: ctx.db.exec<VersionRow>(`SELECT path, rev, until_rev, kind, size FROM versions ORDER BY path, rev`).rows,
  }));
}

export function historySuite(): void {
  describe("history tables", () => {
    it("records each committed rev once, with its host, entry count, time and a distinct 16-byte id", async () => {
      const ws = freshWorkspace();
      const a = new TestHost(ws);
      const b = new TestHost(ws);
      const f = await smallFile("d/f", "one");
      const before = Date.now();
      await a.push([dir("d"), f.entry], [f.object]);
      await b.push([dir("e")]);
      await b.push([dir("e")]); // repeats the stored state: no new rev
      const { revs } = await history(ws);
      expect(revs.map((r) => [r.rev, r.host, r.entries])).toEqual([
        [1, toHex(a.id), 2],
        [2, toHex(b.id), 1],
      ]);
      expect(revs.every((r) => r.id.byteLength === 16 && r.at >= before && r.at <= Date.now())).toBe(true);
      expect(toHex(revs[0]?.id as Uint8Array)).not.toBe(toHex(revs[1]?.id as Uint8Array));
    });

    it("keeps the state an overwrite or a delete replaced, with the revs that wrote and replaced it", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      const v1 = await smallFile("f", "first");
      const v2 = await smallFile("f", "second!");
      await host.push([v1.entry], [v1.object]);
      await host.push([v2.entry], [v2.object]);
      await host.push([gone("f")]);
      const { versions, revs } = await history(ws);
      expect(versions).toEqual([
        { path: "f", rev: 1, until_rev: 2, kind: "file", size: 5 },
        { path: "f", rev: 2, until_rev: 3, kind: "file", size: 7 },
      ]);
      expect(revs.map((r) => r.entries)).toEqual([1, 1, 1]);
    });

    it("keeps every live state of a subtree that a file or symlink replaces, tombstones not", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      const x = await smallFile("d/x", "x");
      const y = await smallFile("d/sub/y", "y");
      await host.push([dir("d"), dir("d/sub"), x.entry, y.entry], [x.object, y.object]);
      await host.push([gone("d/x")]);
      const asFile = await smallFile("d", "now a file");
      await host.push([asFile.entry], [asFile.object]);
      await host.push([symlink("d", "elsewhere")]);
      const { versions, revs } = await history(ws);
      expect(versions.map((v) => [v.path, v.rev, v.until_rev, v.kind])).toEqual([
        ["d", 1, 3, "dir"],
        ["d", 3, 4, "file"],
        ["d/sub", 1, 3, "dir"],
        ["d/sub/y", 1, 3, "file"],
        ["d/x", 1, 2, "file"],
      ]);
      // Rev 3 wrote d and tombstoned d/sub and d/sub/y (d/x was already gone).
      expect(revs.map((r) => r.entries)).toEqual([4, 1, 3, 1]);
    });

    it("writes no history for a refused pack or a repeated one", async () => {
      const ws = freshWorkspace();
      const a = new TestHost(ws);
      const b = new TestHost(ws);
      const f = await smallFile("f", "a");
      const g = await smallFile("g", "a");
      await a.push([f.entry, g.entry], [f.object, g.object]);
      const request = a.packRequest([gone("f")]);
      await ok(ws, "push", request);
      await ok(ws, "push", request);
      // Over a's g, which b never saw: refused (a write over a deletion would not be).
      const stale = await smallFile("g", "b");
      await refused(ws, "push", b.packRequest([{ ...stale.entry, base: 0 }], [stale.object]));
      const { versions, revs } = await history(ws);
      expect(revs.map((r) => r.rev)).toEqual([1, 2]);
      expect(versions.map((v) => [v.path, v.rev, v.until_rev])).toEqual([["f", 1, 2]]);
    });
  });
}
