import { describe, expect, it } from "vitest";
import type { Cursor } from "../../../protocol/cursor.ts";
import type { FileEntry } from "../../../protocol/entry.ts";
import { blob, dir, freshWorkspace, helloRequest, metered, ok, randomId, refused, TestHost } from "../helpers.ts";

async function pushFiles(host: TestHost, count: number, prefix = "f"): Promise<FileEntry[]> {
  const object = await blob("shared");
  const entries = Array.from(
    { length: count },
    (_, i): FileEntry => ({
      kind: "file",
      path: `${prefix}${String(i).padStart(5, "0")}`,
      mode: 0o644,
      mtime: i,
      size: object.bytes.byteLength,
      chunks: [object.hash],
    }),
  );
  await host.push(entries, [object]);
  return entries;
}

export function changesSuite(): void {
  describe("changes", () => {
    it("pages a 5,000-entry pack at 100 a page and resumes mid-rev from a saved cursor", async () => {
      const ws = freshWorkspace();
      const pushed = await pushFiles(new TestHost(ws), 5000);
      const reader = new TestHost(ws);
      let cursor: Cursor = { rev: 0, path: null };
      const firstPages = [];
      for (let i = 0; i < 3; i++) {
        const page = await ok(ws, "changes", { hostId: reader.id, after: cursor, limit: 100 });
        expect(page.entries).toHaveLength(100);
        expect(page.more).toBe(true);
        firstPages.push(...page.entries);
        cursor = page.next;
      }
      expect(cursor).toEqual({ rev: 1, path: "f00299" });

      // A new reader resumes from the saved cursor: nothing repeated, nothing lost.
      const rest = await new TestHost(ws).pullAll(cursor, 100);
      const paths = [...firstPages, ...rest.entries].map((e) => e.path);
      expect(paths).toEqual(pushed.map((e) => e.path));
      expect(rest.next).toEqual({ rev: 1, path: null });
    });

    it("reads a page deep in the pending set in proportion to the page", async () => {
      const ws = freshWorkspace();
      await pushFiles(new TestHost(ws), 5000);
      const meter = await metered(ws, () =>
        ok(ws, "changes", { hostId: randomId(), after: { rev: 1, path: "f04000" }, limit: 100 }),
      );
      expect(meter.rowsRead).toBeLessThanOrEqual(4 * 100);
      expect(meter.statements).toBeLessThanOrEqual(5);
    });

    it("answers the end with the current rev and a null path", async () => {
      const ws = freshWorkspace();
      const writer = new TestHost(ws);
      await writer.push([dir("a")]);
      await writer.push([dir("b")]);
      const page = await ok(ws, "changes", { hostId: randomId(), after: { rev: 0, path: null } });
      expect(page).toMatchObject({ next: { rev: 2, path: null }, more: false, rev: 2 });
      expect(page.entries.map((e) => e.path)).toEqual(["a", "b"]);
    });

    it("coalesces a path changed in several revs into its current state", async () => {
      const ws = freshWorkspace();
      const writer = new TestHost(ws);
      await writer.push([dir("a", 0o700)]);
      await writer.push([dir("b")]);
      await writer.push([dir("a", 0o755)]);
      const page = await ok(ws, "changes", { hostId: randomId(), after: { rev: 0, path: null } });
      expect(page.entries.map((e) => [e.path, e.rev])).toEqual([
        ["b", 2],
        ["a", 3],
      ]);
    });

    it("does not echo a host's own changes but advances its cursor past them", async () => {
      const ws = freshWorkspace();
      const a = new TestHost(ws);
      const b = new TestHost(ws);
      await a.push([dir("from-a")]);
      await b.push([dir("from-b")]);
      const pageA = await ok(ws, "changes", { hostId: a.id, after: { rev: 0, path: null } });
      expect(pageA.entries.map((e) => e.path)).toEqual(["from-b"]);
      expect(pageA.next).toEqual({ rev: 2, path: null });
      const pageB = await ok(ws, "changes", { hostId: b.id, after: { rev: 0, path: null } });
      expect(pageB.entries.map((e) => e.path)).toEqual(["from-a"]);
    });

    it("answers an empty page with more when a page's scan finds only the host's own changes", async () => {
      const ws = freshWorkspace();
      const a = new TestHost(ws);
      await pushFiles(a, 100);
      await new TestHost(ws).push([dir("zz-other")]);
      const page = await ok(ws, "changes", { hostId: a.id, after: { rev: 0, path: null }, limit: 10 });
      expect(page.entries).toEqual([]);
      expect(page.more).toBe(true);
      expect(page.next).toEqual({ rev: 1, path: "f00039" });
      const rest = await a.pullAll(page.next, 10);
      expect(rest.entries.map((e) => e.path)).toEqual(["zz-other"]);
    });

    it("bounds a page by encoded bytes and always carries at least one entry", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      const object = await blob("chunk");
      const big = (i: number): FileEntry => ({
        kind: "file",
        path: `big${i}`,
        mode: 0o644,
        mtime: 0,
        size: 40_000 * 5,
        chunks: Array(40_000).fill(object.hash),
      });
      // Two packs: one of all five would be 200,000 hashes, past maxBodyItems.
      await host.push([big(0), big(1), big(2)], [object]);
      await host.push([big(3), big(4)]);
      const page = await ok(ws, "changes", { hostId: randomId(), after: { rev: 0, path: null } });
      expect(page.entries.length).toBeGreaterThanOrEqual(1);
      expect(page.entries.length).toBeLessThan(5);
      expect(page.more).toBe(true);
    });

    it("caps the page at maxPageEntries whatever limit is asked", async () => {
      const ws = freshWorkspace();
      await pushFiles(new TestHost(ws), 5001);
      const page = await ok(ws, "changes", { after: { rev: 0, path: null }, limit: 1_000_000 });
      expect(page.entries).toHaveLength(5000);
      expect(page.more).toBe(true);
    });

    it("refuses a cursor from another epoch with the server's epoch and rev", async () => {
      const ws = freshWorkspace();
      const { epoch } = await ok(ws, "hello", helloRequest(randomId()));
      const { status, error } = await refused(ws, "changes", { epoch: randomId(), after: { rev: 0, path: null } });
      expect(status).toBe(409);
      expect(error.code).toBe("cursor_mismatch");
      expect(error.epoch).toEqual(epoch);
      expect(error.rev).toBe(0);
    });

    it("refuses a cursor ahead of the server's rev", async () => {
      const ws = freshWorkspace();
      const { error } = await refused(ws, "changes", { after: { rev: 3, path: null } });
      expect(error.code).toBe("cursor_mismatch");
    });

    it("accepts a cursor with the server's epoch", async () => {
      const ws = freshWorkspace();
      const { epoch } = await ok(ws, "hello", helloRequest(randomId()));
      const page = await ok(ws, "changes", { epoch, after: { rev: 0, path: null } });
      expect(page).toEqual({ entries: [], next: { rev: 0, path: null }, more: false, rev: 0 });
    });
  });
}
