/**
 * Billed rows (BRIEF bar 6), counted with the SQL cursor's rowsWritten as
 * the object's storage reports it. Writes are billed at 1,000x reads.
 */
import { describe, expect, it } from "vitest";
import type { Entry, FileEntry } from "../../protocol/entry.ts";
import type { ObjectBlob } from "../../protocol/objects.ts";
import { PACK_BYTES } from "../../worker/sync/packs.ts";
import { freshWorkspace, metered, ok, smallFile, TestHost } from "./helpers.ts";

const FILES = 1000;
/** Rows every applied pack writes once: the host's acked cursor, and its rev's row in revs. */
const PACK_ROWS = 2;

async function newFiles(
  count: number,
  tag: string,
  padding = 0,
): Promise<{ entries: FileEntry[]; objects: ObjectBlob[] }> {
  const files = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      smallFile(`pkg/${tag}/file${String(i).padStart(4, "0")}.js`, `${tag} ${i}${" ".repeat(padding)}`),
    ),
  );
  return { entries: files.map((f) => f.entry), objects: files.map((f) => f.object) };
}

describe("billed rows", () => {
  it("writes at most 3 rows per new small file, and one row per pack, over a 1,000-file pack", async () => {
    const ws = freshWorkspace();
    const host = new TestHost(ws);
    const { entries, objects } = await newFiles(FILES, "a");
    const meter = await metered(ws, () => host.push(entries, objects));
    console.log(`push of ${FILES} new files with inline objects:`, meter);
    // Per file: its entry row, its entries_by_rev index row, its object row.
    // Per pack: the host's acked cursor and the rev's row in revs. A new path
    // replaces no state, so it writes no versions row.
    expect(meter.rowsWritten).toBeLessThanOrEqual(3 * FILES + PACK_ROWS);
  });

  it("adds one pack row per MiB of new object bytes for files over INLINE_BYTES", async () => {
    const ws = freshWorkspace();
    const host = new TestHost(ws);
    const { entries, objects } = await newFiles(FILES, "k", 1000);
    const bytes = objects.reduce((n, o) => n + o.bytes.byteLength, 0);
    const meter = await metered(ws, () => host.push(entries, objects));
    console.log(`push of ${FILES} new 1 KB files with inline objects:`, meter);
    // Objects over INLINE_BYTES share packs (worker/sync/packs.ts): ~0.001 rows a file more than tiny ones.
    expect(meter.rowsWritten).toBeLessThanOrEqual(3 * FILES + PACK_ROWS + Math.ceil(bytes / PACK_BYTES));
  });

  it("writes the same rows when the objects are uploaded before the push", async () => {
    const ws = freshWorkspace();
    const host = new TestHost(ws);
    const { entries, objects } = await newFiles(FILES, "b");
    const upload = await metered(ws, () => ok(ws, "putObjects", { objects }));
    const push = await metered(ws, () => host.push(entries));
    console.log(`putObjects of ${FILES}:`, upload, `push of ${FILES}:`, push);
    expect(upload.rowsWritten + push.rowsWritten).toBeLessThanOrEqual(3 * FILES + PACK_ROWS);
  });

  it("writes no rows for a re-push of an applied pack", async () => {
    const ws = freshWorkspace();
    const host = new TestHost(ws);
    const { entries, objects } = await newFiles(FILES, "c");
    const request = host.packRequest(entries, objects);
    await ok(ws, "push", request);
    const meter = await metered(ws, () => ok(ws, "push", request));
    console.log("re-push of an applied pack:", meter);
    expect(meter.rowsWritten).toBe(0);
  });

  it("writes only the acked cursor for a pack that repeats the stored state", async () => {
    const ws = freshWorkspace();
    const host = new TestHost(ws);
    const { entries, objects } = await newFiles(FILES, "d");
    await host.push(entries, objects);
    // A host that lost its store pushes its unchanged tree again under a new id.
    const meter = await metered(ws, () => new TestHost(ws).push(entries, objects));
    console.log("unchanged tree pushed by a new host:", meter);
    expect(meter.rowsWritten).toBe(1);
  });

  it("writes at most 3 rows per overwritten file: the entry, its rev index row, the version it replaced", async () => {
    const ws = freshWorkspace();
    const host = new TestHost(ws);
    const { entries, objects } = await newFiles(FILES, "e");
    await host.push(entries, objects);
    const meter = await metered(ws, () => host.push(entries.map((e) => ({ ...e, mode: 0o600 }))));
    console.log(`mode change of ${FILES} files:`, meter);
    // Two rows before migration 3; the versions row (history.ts) is the third.
    expect(meter.rowsWritten).toBeLessThanOrEqual(3 * FILES + PACK_ROWS);
  });

  it("writes at most 3 rows per deleted file, a subtree's included", async () => {
    const ws = freshWorkspace();
    const host = new TestHost(ws);
    const { entries, objects } = await newFiles(FILES, "g");
    const dirs: Entry[] = [
      { kind: "dir", path: "pkg", mode: 0o755, mtime: 0 },
      { kind: "dir", path: "pkg/g", mode: 0o755, mtime: 0 },
    ];
    await host.push([...dirs, ...entries], objects);
    const meter = await metered(ws, () => host.push([{ kind: "gone", path: "pkg" }]));
    console.log(`delete of a ${FILES}-file subtree:`, meter);
    expect(meter.rowsWritten).toBeGreaterThanOrEqual(3 * FILES);
    expect(meter.rowsWritten).toBeLessThanOrEqual(3 * (FILES + dirs.length) + PACK_ROWS);
  });
});
