import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { fingerprintRow, rowIsGone, rowPath, rowStat, splitRows } from "../../client/store/fingerprint-rows.ts";
import { SCHEMA_VERSION } from "../../client/store/schema.ts";
import { openStore, STORE_DIR, STORE_FILE } from "../../client/store/sqlite-store.ts";
import type { HostStore, PathRecord, StoreKind } from "../../client/store/store.ts";
import { StoreLockedError, StoreVersionError } from "../../client/store/store-errors.ts";
import { cleanup, STORE_KINDS, tempDir } from "./support/hosts.ts";

afterEach(cleanup);

const file = (path: string, hostRev: number, serverRev = 0): PathRecord => ({
  entry: { kind: "file", path, mode: 0o644, mtime: 1_700_000_000_000, size: 3, chunks: [new Uint8Array(32).fill(7)] },
  sizes: [3],
  stat: "f3:1:2:33188",
  hostRev,
  serverRev,
  agreed: null,
});

describe.each(STORE_KINDS)("%s store", (kind: StoreKind) => {
  let store: HostStore;
  const open = () => {
    store = openStore(kind, tempDir("store"));
    return store;
  };
  afterEach(() => store?.close());

  it("creates a 16-byte host id and starts at the origin", () => {
    open();
    expect(store.hostId).toHaveLength(16);
    expect(store.position()).toEqual({ hostRev: 0, acked: { rev: 0, path: null }, pull: null });
  });

  it("hands out host revs that never repeat", () => {
    open();
    expect(store.reserveHostRevs(3)).toBe(1);
    expect(store.reserveHostRevs(1)).toBe(4);
    store.raiseHostRev(2);
    expect(store.position().hostRev).toBe(4);
    store.raiseHostRev(10);
    expect(store.reserveHostRevs(1)).toBe(11);
  });

  it("round-trips records and lists pending ones in host rev order", () => {
    open();
    store.put(file("b", 5));
    store.put(file("a", 7));
    store.put(file("c", 2));
    store.put(file("dir/x", 9));
    expect(store.get("a")).toEqual(file("a", 7));
    expect(store.pending(2, 10).map((r) => r.entry.path)).toEqual(["b", "a", "dir/x"]);
    expect(store.pending(2, 2).map((r) => r.entry.path)).toEqual(["b", "a"]);
    expect(store.pendingCount(5)).toBe(2);
    expect(store.under("dir").map((r) => r.entry.path)).toEqual(["dir/x"]);
    expect(store.chunkSource(new Uint8Array(32).fill(7))).toBeDefined();
    store.remove("a");
    expect(store.get("a")).toBeUndefined();
  });

  it("reads every path's fingerprint, tombstones and unset fingerprints told apart", () => {
    open();
    const names = Array.from({ length: 200 }, (_, i) => `d${i % 7}/f${i}`);
    names.push("é", "\u{1F600}", "\uFFFA", "a b", "a\u0001b");
    names.forEach((name, i) => {
      const r = file(name, i + 1);
      if (i % 5 === 1) store.put({ ...r, entry: { kind: "gone", path: name }, sizes: [], stat: null });
      else if (i % 5 === 2) store.put({ ...r, stat: null });
      else if (i % 5 === 3) store.put({ ...r, stat: "" });
      else store.put({ ...r, stat: `f${i}:1:2:33188` });
    });
    const rows = splitRows(store.fingerprints());
    const records = [...store.all()];
    expect(records).toHaveLength(names.length);
    // In path order, as `all` lists them, and each row as fingerprintRow makes it from its record.
    expect(rows).toEqual(records.map((r) => fingerprintRow(r.entry.path, r.entry.kind === "gone", r.stat)));
    const paths = rows.map(rowPath);
    expect(paths).toEqual(records.map((r) => r.entry.path));
    expect(rows.map((row, i) => rowStat(row, paths[i] as string))).toEqual(records.map((r) => r.stat));
    expect(rows.filter((row, i) => rowIsGone(row, paths[i] as string))).toHaveLength(41);
  });

  it("reads no fingerprints from an empty store", () => {
    open();
    expect(splitRows(store.fingerprints())).toEqual([]);
    expect(splitRows(store.fingerprints())).toEqual([]);
  });

  it("reads the fingerprints again after every change to a path's row, and the same ones when none changed", () => {
    open();
    const truth = () => [...store.all()].map((r) => fingerprintRow(r.entry.path, r.entry.kind === "gone", r.stat));
    const same = () => {
      // Twice: the first read may keep the rows, the second finds them kept.
      expect(splitRows(store.fingerprints())).toEqual(truth());
      expect(splitRows(store.fingerprints())).toEqual(truth());
    };
    for (const name of ["a", "b", "c", "", "d\n\u0001e", "\u{1F600}"]) store.put(file(name, 1));
    same();
    store.put({ ...file("b", 2), stat: "f4:1:2:33188" });
    same();
    store.put({ ...file("c", 3), stat: null });
    same();
    store.put({ ...file("a", 4), entry: { kind: "gone", path: "a" }, sizes: [], stat: null });
    same();
    store.remove("b");
    same();
    store.markAgreed("c", 5, new Uint8Array(32));
    same();
    store.put(file("new", 6));
    same();
    store.setAcked({ rev: 6, path: null });
    expect(store.pruneTombstones(10)).toBe(1);
    same();
    expect(splitRows(store.fingerprints()).map(rowPath)).toEqual(["", "c", "d\n\u0001e", "new", "\u{1F600}"]);
    store.transaction(() => {
      store.put(file("rolled", 7));
      expect(splitRows(store.fingerprints()).map(rowPath)).toContain("rolled");
    });
    same();
  });

  it("forgets acknowledged tombstones up to the server's dropped rev, never pending ones or newer ones", () => {
    open();
    const gone = (path: string, hostRev: number, serverRev: number): PathRecord => ({
      entry: { kind: "gone", path },
      sizes: [],
      stat: null,
      hostRev,
      serverRev,
      agreed: null,
    });
    store.setAcked({ rev: 5, path: null });
    store.put(gone("pulled", 0, 3));
    store.put(gone("pushed", 4, 6));
    store.put(gone("pending", 9, 2));
    store.put(gone("newer", 0, 8));
    store.put(file("live", 0, 1));
    expect(store.pruneTombstones(7)).toBe(2);
    expect([...store.all()].map((r) => r.entry.path)).toEqual(["live", "newer", "pending"]);
    // Once per rise: a repeated hello forgets nothing more, even a tombstone written since at an old rev.
    store.put(gone("late", 0, 7));
    expect(store.pruneTombstones(7)).toBe(0);
    expect(store.pruneTombstones(8)).toBe(2);
    expect([...store.all()].map((r) => r.entry.path)).toEqual(["live", "pending"]);
  });

  it("keeps cursors and positions", () => {
    open();
    const epoch = new Uint8Array(16).fill(3);
    store.setAcked({ rev: 4, path: null });
    store.setPull({ epoch, cursor: { rev: 9, path: "a/b" } });
    expect(store.position()).toEqual({
      hostRev: 0,
      acked: { rev: 4, path: null },
      pull: { epoch, cursor: { rev: 9, path: "a/b" } },
    });
  });
});

describe("disk store", () => {
  it("survives a reopen with the same host id and state", () => {
    const root = tempDir("store");
    const first = openStore("disk", root);
    first.reserveHostRevs(5);
    first.put(file("kept", 5));
    const id = first.hostId;
    first.close();
    const again = openStore("disk", root);
    expect(again.hostId).toEqual(id);
    expect(again.position().hostRev).toBe(5);
    expect(again.get("kept")).toEqual(file("kept", 5));
    again.close();
  });

  it("refuses a second opener while the first holds it", () => {
    const root = tempDir("store");
    const first = openStore("disk", root);
    expect(() => openStore("disk", root)).toThrow(StoreLockedError);
    first.close();
    openStore("disk", root).close();
  });

  it("records its schema version and refuses a newer one", () => {
    const root = tempDir("store");
    openStore("disk", root).close();
    const db = new Database(join(root, STORE_DIR, STORE_FILE));
    expect(db.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    expect(() => openStore("disk", root)).toThrow(StoreVersionError);
  });

  it("keeps the fingerprints it read for its next open, and reads them again after any change to a path's row", () => {
    const root = tempDir("store");
    const keptRows = () => {
      const db = new Database(join(root, STORE_DIR, STORE_FILE));
      const rows = db.prepare("SELECT rows FROM scan_rows").pluck().all();
      db.close();
      return rows;
    };
    const truth = (store: HostStore) =>
      [...store.all()].map((r) => fingerprintRow(r.entry.path, r.entry.kind === "gone", r.stat));
    let store = openStore("disk", root);
    store.put(file("x", 1));
    store.put(file("y", 2));
    store.put(file("\u{1F600}", 3));
    store.put(file("\uFFFA", 4));
    const read = splitRows(store.fingerprints());
    expect(read).toEqual(truth(store));
    // The caller's array is its own: sorting it (known-paths.ts) changes nothing kept.
    read.sort();
    store.close();
    expect(keptRows()).toHaveLength(1);
    store = openStore("disk", root);
    expect(splitRows(store.fingerprints())).toEqual(truth(store));
    // Read from `paths`, then changed: the rows read are stale, and nothing is kept.
    store.put(file("z", 5));
    expect(splitRows(store.fingerprints())).toEqual(truth(store));
    store.put({ ...file("y", 5), stat: "f4:1:2:33188" });
    store.close();
    expect(keptRows()).toEqual([]);
    store = openStore("disk", root);
    expect(splitRows(store.fingerprints())).toEqual(truth(store));
    store.close();
    expect(keptRows()).toHaveLength(1);
    // A writer that knows nothing of the kept rows: the triggers still drop them.
    const db = new Database(join(root, STORE_DIR, STORE_FILE));
    db.prepare("UPDATE paths SET stat = 'f9:9:9:33188' WHERE path = 'x'").run();
    db.close();
    expect(keptRows()).toEqual([]);
    store = openStore("disk", root);
    expect(splitRows(store.fingerprints())).toEqual(truth(store));
    expect(splitRows(store.fingerprints())[0]).toBe(fingerprintRow("x", false, "f9:9:9:33188"));
    store.close();
    // Read inside a transaction that rolls back: what it read is not kept.
    store = openStore("disk", root);
    expect(() =>
      store.transaction(() => {
        store.put(file("rolled back", 6));
        expect(splitRows(store.fingerprints()).map(rowPath)).toContain("rolled back");
        throw new Error("roll back");
      }),
    ).toThrow("roll back");
    store.close();
    store = openStore("disk", root);
    expect(splitRows(store.fingerprints()).map(rowPath)).not.toContain("rolled back");
    expect(splitRows(store.fingerprints())).toEqual(truth(store));
    store.close();
  });

  it("opens a store of the previous schema version, keeping its records", () => {
    const root = tempDir("store");
    openStore("disk", root).close();
    const db = new Database(join(root, STORE_DIR, STORE_FILE));
    // Back to version 5 as an older ferry left it: no kept rows, no triggers, no ignored_left.
    db.exec("ALTER TABLE host DROP COLUMN ignored_left");
    db.exec("DROP TABLE scan_rows");
    for (const t of ["insert", "delete", "update"]) db.exec(`DROP TRIGGER scan_rows_after_${t}`);
    db.pragma("user_version = 5");
    db.close();
    const old = openStore("disk", root);
    old.put(file("kept", 1));
    expect(splitRows(old.fingerprints()).map(rowPath)).toEqual(["kept"]);
    old.put(file("later", 2));
    expect(splitRows(old.fingerprints()).map(rowPath)).toEqual(["kept", "later"]);
    old.close();
  });

  it("keeps the rules it left ignored paths alone under, across opens", () => {
    const root = tempDir("store");
    const store = openStore("disk", root);
    expect(store.ignoredLeft()).toBeNull();
    store.setIgnoredLeft("ab12");
    store.close();
    const again = openStore("disk", root);
    expect(again.ignoredLeft()).toBe("ab12");
    again.setIgnoredLeft(null);
    again.close();
    const third = openStore("disk", root);
    expect(third.ignoredLeft()).toBeNull();
    third.close();
  });

  it("gives a memory store a new host id every time", () => {
    const root = tempDir("store");
    const a = openStore("memory", root);
    const b = openStore("memory", root);
    expect(a.hostId).not.toEqual(b.hostId);
    a.close();
    b.close();
  });
});
