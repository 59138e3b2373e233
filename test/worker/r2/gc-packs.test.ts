/**
 * Garbage collection with packs in R2 (worker/sync/gc/, PROTOCOL.md §7.9):
 * live → condemned → deleted after the pack grace; a push naming a chunk of
 * a condemned pack revives it; index rows go before R2 objects; partly dead
 * packs rewritten, the new pack named before the old is condemned; orphans
 * found by the listing; old SQLite packs moved to R2.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { joinHashes } from "../../../protocol/hash.ts";
import type { ObjectBlob } from "../../../protocol/objects.ts";
import type { WorkspaceObject } from "../../../worker/do/workspace.ts";
import { packPrefix } from "../../../worker/r2/bucket-store.ts";
import type { LastCollection } from "../../../worker/sync/gc/summary.ts";
import { storeObjects } from "../../../worker/sync/packs.ts";
import type { Retention } from "../../../worker/sync/retention.ts";
import { bucket, call, freshName, keysOf, objects, rows, stubOf } from "./support.ts";

const HOUR = 3600_000;
/** Nothing kept past the current tree, but a condemned pack's bytes for an hour. */
const RETENTION: Retention = { historyMs: 0, graceMs: 0, horizonMs: 0, packGraceMs: HOUR };

function collect(ws: string, laterMs: number): Promise<LastCollection> {
  return runInDurableObject(stubOf(ws), (o: WorkspaceObject) => {
    // As the object's collect() does: a collection makes the storage of a workspace never written.
    o.creation.create();
    return o.collector.collectNow(RETENTION, () => Date.now() + laterMs);
  });
}

async function upload(ws: string, blobs: ObjectBlob[]): Promise<void> {
  let answer = await call(ws, "putObjects", { objects: blobs });
  // A pack the collector deleted a moment ago is refused once (gc/r2-deletes.ts); a host retries.
  if (answer.status === 503) answer = await call(ws, "putObjects", { objects: blobs });
  expect(answer.status).toBe(200);
}

function push(ws: string, blobs: ObjectBlob[], path = "f.bin") {
  const size = blobs.reduce((n, b) => n + b.bytes.byteLength, 0);
  return call(ws, "push", {
    hostId: new Uint8Array(16).fill(1),
    start: { rev: 0, path: null },
    end: { rev: 1, path: null },
    entries: [{ kind: "file", path, mode: 0o644, mtime: 1, size, chunks: joinHashes(blobs.map((b) => b.hash)) }],
    objects: [],
  });
}

async function readable(ws: string, blobs: ObjectBlob[]): Promise<number> {
  const answer = await call(ws, "getObjects", { hashes: blobs.map((b) => b.hash) });
  return (answer.body as { objects: unknown[] }).objects.length;
}

function packs(ws: string) {
  return rows<{ key: string | null; state: string }>(ws, `SELECT r2_key AS key, state FROM packs ORDER BY id`);
}

describe("garbage collection with packs in R2", () => {
  it("condemns a pack nothing wants, keeping its rows and bytes, and a push naming one of its chunks revives it", async () => {
    const ws = freshName();
    const [x] = await objects(1, 5000);
    await upload(ws, [x as ObjectBlob]);
    const run = await collect(ws, 60_000);
    expect(run.freed.packsCondemned).toBe(1);
    const [condemned] = await packs(ws);
    expect(condemned?.state).toBe("condemned");
    expect(await keysOf(ws)).toEqual([condemned?.key]);

    expect((await push(ws, [x as ObjectBlob])).status).toBe(200);
    expect((await packs(ws))[0]?.state).toBe("live");
    // Past the pack grace, the revived pack and its bytes stay: a live file names them.
    await collect(ws, 2 * HOUR);
    expect(await keysOf(ws)).toEqual([condemned?.key]);
    expect(await readable(ws, [x as ObjectBlob])).toBe(1);
  });

  it("deletes a condemned pack's rows, then its bytes, once its grace is over, and stores the same bytes anew", async () => {
    const ws = freshName();
    const [x] = await objects(1, 5000);
    await upload(ws, [x as ObjectBlob]);
    await collect(ws, 60_000);
    const gone = await collect(ws, 2 * HOUR);
    expect(gone.freed).toMatchObject({ objects: 1, packsDeleted: 1, r2Deleted: 1 });
    expect(await rows(ws, `SELECT hash FROM objects`)).toEqual([]);
    expect(await packs(ws)).toEqual([]);
    expect(await keysOf(ws)).toEqual([]);

    await upload(ws, [x as ObjectBlob]);
    expect(await readable(ws, [x as ObjectBlob])).toBe(1);
    expect(await keysOf(ws)).toHaveLength(1);
  });

  it("rewrites a partly dead pack, names the new one, then condemns the old, whose bytes go after the grace", async () => {
    const ws = freshName();
    const blobs = await objects(4, 20_000);
    await upload(ws, blobs);
    const [old] = await keysOf(ws);
    expect((await push(ws, blobs.slice(0, 1))).status).toBe(200);
    const run = await collect(ws, 60_000);
    expect(run.freed).toMatchObject({ packsRewritten: 1, packsCondemned: 1 });
    expect((await packs(ws)).map((p) => p.state)).toEqual(["condemned", "live"]);
    expect(await readable(ws, blobs.slice(0, 1))).toBe(1);
    await collect(ws, 2 * HOUR);
    const left = await keysOf(ws);
    expect(left).toHaveLength(1);
    expect(left).not.toContain(old);
    expect(await readable(ws, blobs.slice(0, 1))).toBe(1);
  });

  it("keeps an object no pack row names for a grace after the listing first sees it, then deletes it", async () => {
    const ws = freshName();
    const orphan = `${packPrefix(ws)}${"ab".repeat(32)}`;
    await bucket().put(orphan, new Uint8Array(100));
    expect((await collect(ws, 0)).freed.orphans).toBe(0);
    expect(await keysOf(ws)).toEqual([orphan]);
    const later = await collect(ws, 2 * HOUR);
    expect(later.freed).toMatchObject({ orphans: 1, r2Deleted: 1 });
    expect(await keysOf(ws)).toEqual([]);
  });

  it("moves packs stored in SQLite before the bucket to R2, and every object reads back", async () => {
    const ws = freshName();
    const blobs = await objects(3, 10_000);
    await runInDurableObject(stubOf(ws), (o: WorkspaceObject) => {
      o.creation.create();
      o.db.transaction(() => storeObjects(o.db, blobs, Date.now()));
    });
    expect((await packs(ws)).map((p) => p.key)).toEqual([null]);
    expect((await push(ws, blobs)).status).toBe(200);
    await collect(ws, 0);
    const after = await packs(ws);
    expect(after).toHaveLength(1);
    expect(after[0]?.key).not.toBe(null);
    expect(await readable(ws, blobs)).toBe(3);
  });
});
