/**
 * Garbage collection and retention (worker/sync/gc/): each retention class
 * is kept for its window and collected after it, in real Durable Object
 * SQLite. Collections run as of a later time instead of waiting.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { toHex } from "../../protocol/hash.ts";
import type { WorkspaceObject } from "../../worker/do/workspace.ts";
import {
  collect,
  count,
  DAY,
  DEFAULT_RETENTION,
  danglingChunks,
  HOUR,
  KEEP_NOTHING,
  storedHashes,
  usage,
} from "./gc-support.ts";
import { blob, freshWorkspace, gone, helloRequest, ok, refused, revIdOf, smallFile, TestHost } from "./helpers.ts";

describe("retention: uploads nothing names", () => {
  it("keeps an unreferenced upload for the grace, then deletes it; never a live file's object", async () => {
    const ws = freshWorkspace();
    const host = new TestHost(ws);
    const file = await smallFile("a.txt", "kept while a.txt is");
    await host.push([file.entry], [file.object]);
    const stray = await blob("uploaded by a push that then failed");
    await ok(ws, "putObjects", { objects: [stray] });

    const early = await collect(ws, DEFAULT_RETENTION, 30 * 60_000);
    expect(early.freed.objects).toBe(0);
    expect(await storedHashes(ws)).toContain(toHex(stray.hash));

    const late = await collect(ws, DEFAULT_RETENTION, 2 * HOUR);
    expect(late.freed.objects).toBe(1);
    expect(late.freed.objectBytes).toBe(stray.bytes.byteLength);
    const held = await storedHashes(ws);
    expect(held).not.toContain(toHex(stray.hash));
    expect(held).toContain(toHex(file.object.hash));
  });
  it("restarts an upload's grace when it is uploaded again, so a push naming it after the grace still finds it", async () => {
    const ws = freshWorkspace();
    const stray = await blob("uploaded, left unnamed, then uploaded again");
    await ok(ws, "putObjects", { objects: [stray] });
    // Two hours pass: the first upload is past its grace.
    await runInDurableObject(ws, (instance: WorkspaceObject) => {
      instance.db.exec(`UPDATE objects SET at = at - ?1`, 2 * HOUR);
    });
    expect(await ok(ws, "putObjects", { objects: [stray] })).toEqual({ stored: 0, present: 1 });

    const next = await collect(ws, DEFAULT_RETENTION, 30 * 60_000);
    expect(next.freed.objects).toBe(0);
    expect(await storedHashes(ws)).toContain(toHex(stray.hash));
  });
});

describe("retention: previous versions", () => {
  it("keeps an overwritten version and its object for the history window, then drops both", async () => {
    const ws = freshWorkspace();
    const host = new TestHost(ws);
    const v1 = await smallFile("f.txt", "first version");
    const v2 = await smallFile("f.txt", "second version");
    await host.push([v1.entry], [v1.object]);
    await host.push([v2.entry], [v2.object]);

    const inWindow = await collect(ws, DEFAULT_RETENTION, 6 * DAY);
    expect(inWindow.freed).toMatchObject({ versions: 0, objects: 0 });
    expect(await storedHashes(ws)).toContain(toHex(v1.object.hash));

    const past = await collect(ws, DEFAULT_RETENTION, 8 * DAY);
    expect(past.freed).toMatchObject({ versions: 1, objects: 1 });
    expect(await count(ws, `SELECT count(*) AS n FROM versions`)).toBe(0);
    const held = await storedHashes(ws);
    expect(held).not.toContain(toHex(v1.object.hash));
    expect(held).toContain(toHex(v2.object.hash));
  });

  it("keeps a deleted file's last version for the window, and an object a live file still shares", async () => {
    const ws = freshWorkspace();
    const host = new TestHost(ws);
    const doomed = await smallFile("old/x.txt", "shared bytes");
    const twin = await smallFile("new/x.txt", "shared bytes");
    const alone = await smallFile("old/y.txt", "only here");
    await host.push([doomed.entry, alone.entry], [doomed.object, alone.object]);
    await host.push([twin.entry, gone("old/x.txt"), gone("old/y.txt")]);

    await collect(ws, DEFAULT_RETENTION, DAY);
    expect(await storedHashes(ws)).toContain(toHex(alone.object.hash));
    expect(await count(ws, `SELECT count(*) AS n FROM versions`)).toBe(2);

    const past = await collect(ws, DEFAULT_RETENTION, 8 * DAY);
    expect(past.freed).toMatchObject({ versions: 2, objects: 1 });
    const held = await storedHashes(ws);
    expect(held).not.toContain(toHex(alone.object.hash));
    expect(held).toContain(toHex(twin.object.hash));
    expect(await danglingChunks(ws)).toEqual([]);
  });
});

describe("retention: tombstones and the horizon", () => {
  it("drops tombstones past the horizon and answers resync to a pull cursor older than them", async () => {
    const ws = freshWorkspace();
    const writer = new TestHost(ws);
    const reader = new TestHost(ws);
    const a = await smallFile("a", "a");
    const b = await smallFile("b", "b");
    await writer.push([a.entry, b.entry], [a.object, b.object]); // rev 1
    const { epoch } = await ok(ws, "hello", helloRequest(reader.id));
    await writer.push([gone("a")]); // rev 2
    await writer.push([gone("b")]); // rev 3

    const kept = await collect(ws, DEFAULT_RETENTION, 29 * DAY);
    expect(kept.freed.tombstones).toBe(0);
    expect((await ok(ws, "hello", helloRequest(reader.id))).tombstonesDropped).toBeUndefined();
    const dropped = await collect(ws, DEFAULT_RETENTION, 31 * DAY);
    expect(dropped.freed.tombstones).toBe(2);
    // Hosts are told how far, to forget their own acknowledged tombstones as far (§9.3).
    expect((await ok(ws, "hello", helloRequest(reader.id))).tombstonesDropped).toBe(3);
    expect(await count(ws, `SELECT count(*) AS n FROM entries`)).toBe(0);

    // Positions whose rev identity is right (rev-identity.test.ts): only the horizon can send them to resync.
    const at = async (rev: number) =>
      helloRequest(reader.id, { pull: { epoch, cursor: { rev, path: null }, revId: await revIdOf(ws, rev) } });
    expect((await ok(ws, "hello", await at(1))).resync).toBe(true);
    expect((await ok(ws, "hello", await at(2))).resync).toBe(true);
    expect((await ok(ws, "hello", await at(3))).resync).toBe(false);
    const stale = await refused(ws, "changes", { after: { rev: 1, path: null } });
    expect(stale.error.code).toBe("cursor_mismatch");
    // A whole pull from the origin is still whole: it is how the host resyncs.
    expect((await reader.pullAll()).entries).toEqual([]);
  });

  it("answers resync to a cursor inside the newest rev whose tombstones were dropped", async () => {
    const ws = freshWorkspace();
    const writer = new TestHost(ws);
    const reader = new TestHost(ws);
    const files = await Promise.all(["a", "b", "c"].map((p) => smallFile(p, p)));
    await writer.push(
      files.map((f) => f.entry),
      files.map((f) => f.object),
    ); // rev 1
    const { epoch } = await ok(ws, "hello", helloRequest(reader.id));
    await writer.push([gone("a"), gone("c")]); // rev 2
    await collect(ws, DEFAULT_RETENTION, 31 * DAY);
    expect(await count(ws, `SELECT count(*) AS n FROM entries WHERE kind = 'gone'`)).toBe(0);

    // Delivered rev 2 up to "a": the deletion of "c" in the same rev is gone from storage.
    const inside = { rev: 2, path: "a" };
    const pull = { epoch, cursor: inside, revId: await revIdOf(ws, 2) };
    expect(await ok(ws, "hello", helloRequest(reader.id, { pull }))).toMatchObject({ resync: true, horizon: true });
    expect((await refused(ws, "changes", { after: inside })).error.code).toBe("cursor_mismatch");
    // Another history as well: not the horizon alone, so the host may not trust its saved states.
    const restored = { ...pull, revId: new Uint8Array(pull.revId.byteLength) };
    const answer = await ok(ws, "hello", helloRequest(reader.id, { pull: restored }));
    expect(answer.resync).toBe(true);
    expect(answer.horizon).toBeUndefined();
    // The whole of rev 2 delivered: nothing was missed.
    const whole = { epoch, cursor: { rev: 2, path: null }, revId: await revIdOf(ws, 2) };
    expect((await ok(ws, "hello", helloRequest(reader.id, { pull: whole }))).resync).toBe(false);
  });

  it("keeps tombstones inside the horizon, so a cursor before them still sees the deletion", async () => {
    const ws = freshWorkspace();
    const writer = new TestHost(ws);
    const a = await smallFile("a", "a");
    await writer.push([a.entry], [a.object]);
    await writer.push([gone("a")]);
    await collect(ws, DEFAULT_RETENTION, 8 * DAY);
    const { entries } = await new TestHost(ws).pullAll({ rev: 1, path: null });
    expect(entries.map((e) => [e.path, e.kind])).toEqual([["a", "gone"]]);
  });
});

describe("collection", () => {
  it("frees nothing and writes only its record when there is nothing to free", async () => {
    const ws = freshWorkspace();
    const host = new TestHost(ws);
    const f = await smallFile("a", "a");
    await host.push([f.entry], [f.object]);
    const run = await collect(ws, DEFAULT_RETENTION);
    expect(run.freed).toMatchObject({ objects: 0, versions: 0, tombstones: 0, packsDeleted: 0, packsRewritten: 0 });
    // The 'gc' meta row at the start; the end's write is its own.
    expect(run.freed.rowsWritten).toBeLessThanOrEqual(2);
  });

  it("reports live, history and stored bytes in stats", async () => {
    const ws = freshWorkspace();
    const host = new TestHost(ws);
    const v1 = await smallFile("f", "x".repeat(1000));
    const v2 = await smallFile("f", "y".repeat(3000));
    await host.push([v1.entry], [v1.object]);
    await host.push([v2.entry], [v2.object]);
    const before = await usage(ws);
    expect(before).toMatchObject({ liveBytes: 3000, historyBytes: 1000, unreferencedBytes: 0, versions: 1 });
    expect(before.storedBytes).toBe(4000);
    await collect(ws, KEEP_NOTHING, 1000);
    const after = await usage(ws);
    expect(after).toMatchObject({ liveBytes: 3000, historyBytes: 0, storedBytes: 3000, versions: 0 });
    expect(after.lastCollection?.freed.objects).toBe(1);
  });
});
