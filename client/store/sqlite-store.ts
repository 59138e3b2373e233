/**
 * The host store on better-sqlite3: a file under `<root>/.ferry/` in WAL mode,
 * or `:memory:`. The file is held with `locking_mode = EXCLUSIVE` for the
 * life of the connection, so a second process (or a second store in this
 * one) opening the same store fails fast with `StoreLockedError` instead of
 * interleaving writes; the operating system drops the lock if the holder dies.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { decodeCbor, encodeCbor } from "../../protocol/cbor.ts";
import { type Change, changeFields, readChange } from "../../protocol/changes.ts";
import type { Cursor } from "../../protocol/cursor.ts";
import { ID_BYTES, type PullPosition } from "../../protocol/hello.ts";
import { subtreeRange } from "../../protocol/paths.ts";
import { type Database, openDatabase } from "./database.ts";
import { joinRows } from "./fingerprint-rows.ts";
import { PATH_COLUMNS, type PathValues, recordValues, rowToRecord } from "./record.ts";
import { MIGRATIONS, SCHEMA_VERSION } from "./schema.ts";
import type { Deferred, HostStore, PathRecord, PullIntent, StoreKind, StorePosition } from "./store.ts";
import { STORE_DIR } from "./store-dir.ts";

export { STORE_DIR } from "./store-dir.ts";
export const STORE_FILE = "store.db";

/** Another process (or another store object) holds this store. */
export class StoreLockedError extends Error {
  readonly code = "store_locked";
  constructor(readonly file: string) {
    super(`the store ${file} is in use by another ferry process`);
    this.name = "StoreLockedError";
  }
}

/**
 * A store file SQLite cannot read (random bytes, a truncated copy): named
 * with the way out, instead of SQLite's words. Moving `.ferry/` aside loses
 * only positions: the next sync reconciles the tree with the server, sending
 * only what differs. Also for the binding's root.db (binding.ts).
 */
export class StoreCorruptError extends Error {
  readonly code = "store_corrupt";
  constructor(file: string, reason: string) {
    super(`${file} is not a ferry store (${reason}); move ${STORE_DIR} aside to start again: the next sync reconciles`);
    this.name = "StoreCorruptError";
  }
}

/** What opening the database `file` threw, as the store's own error where it has one. */
export function storeOpenError(e: unknown, file: string): unknown {
  const code = (e as { code?: unknown }).code;
  if (code === "SQLITE_BUSY") return new StoreLockedError(file);
  if (typeof code === "string" && /^SQLITE_(NOTADB|CORRUPT)/.test(code))
    return new StoreCorruptError(file, (e as Error).message);
  return e;
}

/** The store was written by a newer ferry. */
export class StoreVersionError extends Error {
  readonly code = "store_version";
  constructor(file: string, found: number) {
    super(`the store ${file} has schema version ${found}; this ferry knows up to ${SCHEMA_VERSION}`);
    this.name = "StoreVersionError";
  }
}

interface HostRow {
  host_id: Uint8Array;
  host_rev: number;
  acked_rev: number;
  acked_path: string | null;
  pull_epoch: Uint8Array | null;
  pull_rev: number | null;
  pull_path: string | null;
  pull_rev_id: Uint8Array | null;
  tombstones_pruned: number;
  ignored_left: string | null;
}

/** Opens (creating if needed) the store of `root` on disk, or an in-memory store. */
/**
 * Deletes the directory's store (its host id, positions and records): for a
 * directory rebound to another workspace, whose store only knew the old one.
 * The caller holds the directory's lock (binding.ts).
 */
export function dropStore(root: string): void {
  const file = join(root, STORE_DIR, STORE_FILE);
  for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true });
}

export function openStore(kind: StoreKind, root: string): HostStore {
  if (kind === "memory") return new SqliteStore(openDatabase(":memory:"), kind, ":memory:");
  const dir = join(root, STORE_DIR);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, STORE_FILE);
  const db = openDatabase(file, { timeout: 0 });
  try {
    db.pragma("locking_mode = EXCLUSIVE");
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    return new SqliteStore(db, kind, file);
  } catch (e) {
    db.close();
    throw storeOpenError(e, file);
  }
}

class SqliteStore implements HostStore {
  readonly hostId: Uint8Array;
  private readonly stmt;
  private hostRow: HostRow;
  /** The fingerprint text last read from `paths`, for keepFingerprints() (null: none read, or kept already). */
  private rowsRead: string | null = null;

  constructor(
    private readonly db: Database.Database,
    readonly kind: StoreKind,
    file: string,
  ) {
    migrate(db, file);
    this.stmt = preparedOnUse({
      host: () => db.prepare<[], HostRow>("SELECT * FROM host WHERE id = 1"),
      setHostRev: () => db.prepare<[number]>("UPDATE host SET host_rev = ? WHERE id = 1"),
      setAcked: () => db.prepare<[number, string | null]>("UPDATE host SET acked_rev = ?, acked_path = ? WHERE id = 1"),
      setPull: () =>
        db.prepare<[Uint8Array | null, number | null, string | null, Uint8Array | null]>(
          "UPDATE host SET pull_epoch = ?, pull_rev = ?, pull_path = ?, pull_rev_id = ? WHERE id = 1",
        ),
      get: () => db.prepare<[string], PathValues>(`SELECT ${PATH_COLUMNS} FROM paths WHERE path = ?`).raw(),
      all: () => db.prepare<[], PathValues>(`SELECT ${PATH_COLUMNS} FROM paths ORDER BY path`).raw(),
      // One string per row, `path NUL flag [= stat]`: flag `g` for a tombstone, `k` for any other
      // kind; no `=` when the stat is null. NUL is in no path. In path order: the scanner merges the
      // rows with its walk (known-paths.ts).
      fingerprints: () =>
        db
          .prepare<[], string>(
            // The rows of fingerprint-rows.ts, in the primary key's order.
            "SELECT path || char(0) || iif(kind = 'gone', 'g', 'k') || coalesce('=' || stat, '') FROM paths ORDER BY path",
          )
          .pluck(),
      keptRows: () => db.prepare<[], string | null>("SELECT rows FROM scan_rows WHERE id = 1").pluck(),
      markRowsRead: () => db.prepare<[]>("INSERT OR REPLACE INTO scan_rows (id, rows) VALUES (1, NULL)"),
      keepRows: () => db.prepare<[string]>("UPDATE scan_rows SET rows = ? WHERE id = 1 AND rows IS NULL"),
      under: () =>
        db
          .prepare<[string, string], PathValues>(
            `SELECT ${PATH_COLUMNS} FROM paths WHERE path >= ? AND path < ? ORDER BY path`,
          )
          .raw(),
      pending: () =>
        db
          .prepare<[number, number], PathValues>(
            // `host_rev > 0` lets the partial index paths_by_host_rev serve it: a restore reads no rows.
            `SELECT ${PATH_COLUMNS} FROM paths WHERE host_rev > ? AND host_rev > 0 ORDER BY host_rev LIMIT ?`,
          )
          .raw(),
      pendingCount: () =>
        db.prepare<[number], { n: number }>("SELECT count(*) AS n FROM paths WHERE host_rev > ? AND host_rev > 0"),
      pendingDeletions: () =>
        db.prepare<[number], { n: number }>(
          "SELECT count(*) AS n FROM paths WHERE host_rev > ? AND host_rev > 0 AND kind = 'gone' AND server_rev > 0",
        ),
      livePaths: () => db.prepare<[], { n: number }>("SELECT count(*) AS n FROM paths WHERE kind != 'gone'"),
      put: () =>
        db.prepare<PathValues>(
          `INSERT OR REPLACE INTO paths (${PATH_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ),
      remove: () => db.prepare<[string]>("DELETE FROM paths WHERE path = ?"),
      markAgreed: () =>
        db.prepare<[number, Uint8Array, string]>("UPDATE paths SET server_rev = ?, agreed = ? WHERE path = ?"),
      deferred: () =>
        db.prepare<[], { change: Uint8Array; reason: string }>("SELECT change, reason FROM deferred ORDER BY path"),
      defer: () =>
        db.prepare<[string, Uint8Array, string]>(
          "INSERT OR REPLACE INTO deferred (path, change, reason) VALUES (?, ?, ?)",
        ),
      undefer: () => db.prepare<[string]>("DELETE FROM deferred WHERE path = ?"),
      putSource: () =>
        db.prepare<[Uint8Array, string]>("INSERT OR REPLACE INTO chunk_sources (hash, path) VALUES (?, ?)"),
      source: () => db.prepare<[Uint8Array], { path: string }>("SELECT path FROM chunk_sources WHERE hash = ?"),
      anySource: () => db.prepare<[], { one: number }>("SELECT 1 AS one FROM chunk_sources LIMIT 1"),
      journal: () =>
        db.prepare<[string, number, Uint8Array]>(
          "INSERT OR REPLACE INTO pulling (path, rev, signature) VALUES (?, ?, ?)",
        ),
      journalRows: () =>
        db.prepare<[], { path: string; rev: number; signature: Uint8Array }>(
          "SELECT path, rev, signature FROM pulling ORDER BY path",
        ),
      clearJournal: () => db.prepare<[]>("DELETE FROM pulling"),
      pruneTombstones: () =>
        db.prepare<[number]>(
          "DELETE FROM paths WHERE kind = 'gone' AND server_rev <= ? AND host_rev <= (SELECT acked_rev FROM host WHERE id = 1)",
        ),
      setPruned: () => db.prepare<[number]>("UPDATE host SET tombstones_pruned = ? WHERE id = 1"),
      setIgnoredLeft: () => db.prepare<[string | null]>("UPDATE host SET ignored_left = ? WHERE id = 1"),
    });
    let row = this.stmt.host.get();
    if (!row) {
      db.prepare("INSERT INTO host (id, host_id, host_rev, acked_rev) VALUES (1, ?, 0, 0)").run(randomBytes(ID_BYTES));
      row = this.stmt.host.get() as HostRow;
    }
    this.hostRow = row;
    this.hostId = new Uint8Array(row.host_id);
  }

  position(): StorePosition {
    const r = this.hostRow;
    const pull =
      r.pull_epoch && r.pull_rev !== null
        ? {
            epoch: new Uint8Array(r.pull_epoch),
            cursor: { rev: r.pull_rev, path: r.pull_path },
            ...(r.pull_rev_id ? { revId: new Uint8Array(r.pull_rev_id) } : {}),
          }
        : null;
    return { hostRev: r.host_rev, acked: { rev: r.acked_rev, path: r.acked_path }, pull };
  }

  reserveHostRevs(count: number): number {
    const first = this.hostRow.host_rev + 1;
    this.stmt.setHostRev.run(this.hostRow.host_rev + count);
    this.hostRow = { ...this.hostRow, host_rev: this.hostRow.host_rev + count };
    return first;
  }

  raiseHostRev(rev: number): void {
    if (rev <= this.hostRow.host_rev) return;
    this.stmt.setHostRev.run(rev);
    this.hostRow = { ...this.hostRow, host_rev: rev };
  }

  setAcked(acked: Cursor): void {
    this.stmt.setAcked.run(acked.rev, acked.path);
    this.hostRow = { ...this.hostRow, acked_rev: acked.rev, acked_path: acked.path };
  }

  setPull(pull: PullPosition | null): void {
    const revId = pull?.revId ?? null;
    this.stmt.setPull.run(pull?.epoch ?? null, pull?.cursor.rev ?? null, pull?.cursor.path ?? null, revId);
    this.hostRow = {
      ...this.hostRow,
      pull_epoch: pull?.epoch ?? null,
      pull_rev: pull?.cursor.rev ?? null,
      pull_path: pull?.cursor.path ?? null,
      pull_rev_id: revId,
    };
  }

  pruneTombstones(upTo: number): number {
    if (upTo <= this.hostRow.tombstones_pruned) return 0;
    const pruned = this.transaction(() => {
      const { changes } = this.stmt.pruneTombstones.run(upTo);
      this.stmt.setPruned.run(upTo);
      return changes;
    });
    this.hostRow = { ...this.hostRow, tombstones_pruned: upTo };
    return pruned;
  }

  ignoredLeft(): string | null {
    return this.hostRow.ignored_left;
  }

  setIgnoredLeft(digest: string | null): void {
    if (digest === this.hostRow.ignored_left) return;
    this.stmt.setIgnoredLeft.run(digest);
    this.hostRow = { ...this.hostRow, ignored_left: digest };
  }

  get(path: string): PathRecord | undefined {
    const row = this.stmt.get.get(path);
    return row ? rowToRecord(row) : undefined;
  }

  *all(): Iterable<PathRecord> {
    for (const row of this.stmt.all.iterate()) yield rowToRecord(row);
  }

  /**
   * Kept whole in `scan_rows` from one command to the next while no path's
   * row changes (schema.ts): at 30,000 files, one value costs a fraction of
   * building 34,771 strings a row at a time. A read from
   * `paths` leaves a marker there that any change to a path's row deletes;
   * keepFingerprints() keeps the rows only where the marker survived, so a
   * command that changes paths writes no rows that its own changes make stale.
   */
  fingerprints(): string {
    const kept = this.stmt.keptRows.get();
    if (typeof kept === "string") return kept;
    const text = joinRows(this.stmt.fingerprints.all());
    // Inside a transaction, what was read may yet be rolled back: nothing is kept.
    if (this.db.inTransaction) return text;
    this.stmt.markRowsRead.run();
    this.rowsRead = text;
    return text;
  }

  under(dir: string): PathRecord[] {
    const { from, to } = subtreeRange(dir);
    return this.stmt.under.all(from, to).map(rowToRecord);
  }

  pending(afterRev: number, limit: number): PathRecord[] {
    return this.stmt.pending.all(afterRev, limit).map(rowToRecord);
  }

  pendingCount(afterRev: number): number {
    return this.stmt.pendingCount.get(afterRev)?.n ?? 0;
  }

  pendingDeletions(afterRev: number): number {
    return this.stmt.pendingDeletions.get(afterRev)?.n ?? 0;
  }

  livePaths(): number {
    return this.stmt.livePaths.get()?.n ?? 0;
  }

  put(record: PathRecord): void {
    this.stmt.put.run(...recordValues(record));
    const e = record.entry;
    if (e.kind === "file") for (const h of e.chunks) this.stmt.putSource.run(h, e.path);
  }

  remove(path: string): void {
    this.stmt.remove.run(path);
  }

  markAgreed(path: string, serverRev: number, agreed: Uint8Array): void {
    this.stmt.markAgreed.run(serverRev, agreed, path);
  }

  deferred(): Deferred[] {
    return this.stmt.deferred.all().map((row) => ({ change: decodeDeferred(row.change), reason: row.reason }));
  }

  defer({ change, reason }: Deferred): void {
    this.stmt.defer.run(change.path, encodeCbor(changeFields(change)), reason);
  }

  undefer(path: string): void {
    this.stmt.undefer.run(path);
  }

  journalPull(intents: readonly PullIntent[]): void {
    this.transaction(() => {
      this.stmt.clearJournal.run();
      for (const i of intents) this.stmt.journal.run(i.path, i.rev, i.signature);
    });
  }

  pullJournal(): PullIntent[] {
    return this.stmt.journalRows.all().map((r) => ({ ...r, signature: new Uint8Array(r.signature) }));
  }

  clearPullJournal(): void {
    this.stmt.clearJournal.run();
  }

  chunkSource(hash: Uint8Array): string | undefined {
    return this.stmt.source.get(hash)?.path;
  }

  hasChunkSources(): boolean {
    return this.stmt.anySource.get() !== undefined;
  }

  transaction<T>(fn: () => T): T {
    if (this.db.inTransaction) return fn();
    return this.db.transaction(fn)();
  }

  keepFingerprints(): void {
    const text = this.rowsRead;
    this.rowsRead = null;
    if (text === null || !this.db.open) return;
    try {
      // Matches only while the marker fingerprints() left is there: no path's row changed since the read.
      this.stmt.keepRows.run(text);
    } catch {
      // Kept rows only save the next read: a store that cannot take them (a full disk) loses nothing.
    }
  }

  close(): void {
    if (!this.db.open) return;
    this.keepFingerprints();
    this.db.close();
  }
}

/**
 * The store's statements, each prepared the first time it is used: a
 * command uses a few of the 30, and preparing all of them at open cost
 * every command ~1 ms of CPU (BENCHMARKS.md section 16).
 * better-sqlite3 prepares while an iterator is open, so no use can fail
 * where an eager prepare would not.
 */
function preparedOnUse<T extends Record<string, () => unknown>>(
  make: T,
): { readonly [K in keyof T]: ReturnType<T[K]> } {
  const made: Record<string, unknown> = {};
  const statements = {};
  for (const [key, prepare] of Object.entries(make)) {
    Object.defineProperty(statements, key, { get: () => (made[key] ??= prepare()) });
  }
  return statements as { readonly [K in keyof T]: ReturnType<T[K]> };
}

/** A deferred change as it was written: a change map, read back with the wire's own reader. */
function decodeDeferred(bytes: Uint8Array): Change {
  return readChange(decodeCbor(new Uint8Array(bytes)), "deferred");
}

function migrate(db: Database.Database, file: string): void {
  // Takes the write lock at once (BEGIN IMMEDIATE), which in exclusive mode is
  // held until close: the point where a second opener gets SQLITE_BUSY.
  db.transaction(() => {
    const version = db.pragma("user_version", { simple: true }) as number;
    if (version > SCHEMA_VERSION) throw new StoreVersionError(file, version);
    if (version === SCHEMA_VERSION) return; // nothing to write: the open commits no page (every command opens)
    for (const statements of MIGRATIONS.slice(version)) for (const sql of statements) db.exec(sql);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}
