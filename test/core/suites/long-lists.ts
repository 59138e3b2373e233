/**
 * A file's chunk list is stored in its row and may be 2 MB (60,000
 * chunks), and a statement holds every row it returns: reads of many
 * rows leave long lists out and read them one at a time
 * (worker/sync/entries.ts), so the object's memory stays bounded however
 * many such files a read-write client stores (a list of 60,000 copies of
 * one 1-byte chunk costs it one upload).
 */
import { describe, expect, it } from "vitest";
import { ORIGIN } from "../../../protocol/cursor.ts";
import type { Entry, FileEntry } from "../../../protocol/entry.ts";
import { ProtocolError } from "../../../protocol/errors.ts";
import { pushEntryOf } from "../../../protocol/push.ts";
import { changes } from "../../../worker/sync/changes.ts";
import type { Db, Result, Row, SqlValue, SyncContext } from "../../../worker/sync/db.ts";
import { markEntries, markVersions } from "../../../worker/sync/gc/mark.ts";
import { HashMarks } from "../../../worker/sync/gc/marks.ts";
import { readUsage } from "../../../worker/sync/gc/usage.ts";
import { push } from "../../../worker/sync/push.ts";
import { snapshot } from "../../../worker/sync/snapshot.ts";
import { blob, freshWorkspace, gone, TestHost } from "../helpers.ts";

const FILES = 3;
/** Far past what a bulk read carries inline (4,096 bytes), well under the 60,000 a file may have. */
const CHUNKS = 20_000;
/** One chunk list: its hashes of 32 bytes each. */
const LIST_BYTES = CHUNKS * 32;

/** The Db, noting the most blob bytes any one statement returned. */
function recording(db: Db): Db & { most: number } {
  const r = {
    most: 0,
    exec<T extends Row = Row>(sql: string, ...params: SqlValue[]): Result<T> {
      const result = db.exec<T>(sql, ...params);
      let bytes = 0;
      for (const row of result.rows)
        for (const v of Object.values(row)) if (v instanceof Uint8Array) bytes += v.byteLength;
      r.most = Math.max(r.most, bytes);
      return result;
    },
    transaction: <T>(fn: () => T): T => db.transaction(fn),
  };
  return r;
}

export function longListsSuite(): void {
  describe("reads over files with long chunk lists", () => {
    it("hold one long list at a time, and answer every list whole", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      const chunk = await blob("c");
      const file = (i: number, mode: number): FileEntry => ({
        kind: "file",
        path: `big/${i}`,
        mode,
        mtime: 0,
        size: CHUNKS,
        chunks: Array(CHUNKS).fill(chunk.hash),
      });
      // Written twice (the second mode differs), so versions hold long lists too.
      for (const mode of [0o644, 0o600]) {
        await host.push(
          Array.from({ length: FILES }, (_, i) => file(i, mode)),
          [chunk],
        );
      }
      await ws.withDb(async (ctx: SyncContext) => {
        const db = recording(ctx.db);
        const at = { ...ctx, db };
        const lengths = (entries: readonly Entry[]) => entries.map((e) => (e.kind === "file" ? e.chunks.length : -1));
        const page = changes(at, { after: ORIGIN, limit: 5000 });
        if (page instanceof ProtocolError) throw page;
        expect(lengths(page.entries)).toEqual(Array(FILES).fill(CHUNKS));
        const history = changes(at, { after: ORIGIN, limit: 5000, history: true });
        if (history instanceof ProtocolError) throw history;
        // Each change carries its earlier state; the page ends where they pass its bytes.
        expect(history.entries.length).toBeGreaterThan(0);
        expect(history.entries.map((c) => lengths(c.past ?? []))).toEqual(Array(history.entries.length).fill([CHUNKS]));
        const snap = snapshot(at, { rev: 1 });
        if (snap instanceof ProtocolError) throw snap;
        expect(lengths(snap.entries)).toEqual(Array(FILES).fill(CHUNKS));
        const usage = readUsage(at, null);
        expect([usage.liveBytes, usage.historyBytes]).toEqual([1, 0]);
        const marks = new HashMarks();
        markEntries(db, marks, null, 2000, 0);
        markVersions(db, marks, null, 2000, 0);
        expect(marks.has(chunk.hash)).toBe(true);
        // A push naming every such path reads no list it was not sent.
        const deleted = await push(at, {
          hostId: host.id,
          start: host.acked,
          end: { rev: host.hostRev + 1, path: null },
          entries: Array.from({ length: FILES }, (_, i) => pushEntryOf(gone(`big/${i}`))),
          objects: [],
        });
        expect(deleted).toMatchObject({ applied: true });
        expect(db.most).toBeLessThanOrEqual(LIST_BYTES);
      });
    });
  });
}
