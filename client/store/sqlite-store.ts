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
import { recordValues, rowToRecord } from "./record.ts";
import { MIGRATIONS, SCHEMA_VERSION } from "./schema.ts";
import { type HostRow, type StoreStatements, storeStatements } from "./statements.ts";
import type { Deferred, HostStore, PathRecord, PullIntent, StoreKind, StorePosition } from "./store.ts";
import { STORE_DIR } from "./store-dir.ts";
import { StoreVersionError, storeOpenError } from "./store-errors.ts";

export { STORE_DIR } from "./store-dir.ts";
export const STORE_FILE = "store.db";

/**
 * Deletes the directory's store (its host id, positions and records): for a
 * directory rebound to another workspace, whose store only knew the old one.
 * The caller holds the directory's lock (binding.ts).
 */
export function dropStore(root: string): void {
  const file = join(root, STORE_DIR, STORE_FILE);
  for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true });
}

/** Opens (creating if needed) the store of `root` on disk, or an in-memory store. */
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
  private readonly stmt: StoreStatements;
  private hostRow: HostRow;
  /** The fingerprint text last read from `paths`, for keepFingerprints() (null: none read, or kept already). */
  private rowsRead: string | null = null;

  constructor(
    private readonly db: Database.Database,
    readonly kind: StoreKind,
    file: string,
  ) {
    migrate(db, file);
    this.stmt = storeStatements(db);
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
