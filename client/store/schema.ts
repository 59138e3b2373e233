/**
 * The host store's schema: ordered migrations, each a list of DDL statements,
 * run in one transaction; `PRAGMA user_version` is the number applied. Append
 * only: a released migration is never edited.
 */
export const MIGRATIONS: readonly (readonly string[])[] = [
  [
    // One row: who this host is and where its two cursors stand.
    `CREATE TABLE host (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      host_id BLOB NOT NULL,
      host_rev INTEGER NOT NULL,
      acked_rev INTEGER NOT NULL,
      acked_path TEXT,
      pull_epoch BLOB,
      pull_rev INTEGER,
      pull_path TEXT
    )`,
    // Per path: its local state (as last scanned or applied), the stat
    // fingerprint that lets the scanner skip reading it, the host rev of its
    // last local change (0: the state came from the server), and the server
    // rev and state signature it last agreed with the server.
    `CREATE TABLE paths (
      path TEXT PRIMARY KEY,
      kind TEXT NOT NULL,
      mode INTEGER NOT NULL,
      mtime INTEGER NOT NULL,
      size INTEGER NOT NULL,
      chunks BLOB,
      sizes BLOB,
      target TEXT,
      stat TEXT,
      host_rev INTEGER NOT NULL,
      server_rev INTEGER NOT NULL,
      agreed BLOB
    )`,
    // Serves the push query: local changes after the acked host rev, in order.
    "CREATE INDEX paths_by_host_rev ON paths (host_rev) WHERE host_rev > 0",
    // Serves pulls: a local file that holds a chunk, so it is not downloaded.
    "CREATE TABLE chunk_sources (hash BLOB PRIMARY KEY, path TEXT NOT NULL) WITHOUT ROWID",
  ],
  [
    // The page a pull is applying: the server state (signature, rev) each
    // path is about to be given, written before the page's first disk write
    // and cleared with its cursor. A pull killed in between leaves it, and
    // the next start records as agreed what already reached the disk
    // (engine/pull-journal.ts), so the rerun does not take it for local work.
    "CREATE TABLE pulling (path TEXT PRIMARY KEY, rev INTEGER NOT NULL, signature BLOB NOT NULL) WITHOUT ROWID",
  ],
  [
    // Server changes this host could not write (a name too long here, no
    // permission: the applier's refusals), kept so the next pull retries
    // them although its cursor has moved past them. `change` is the CBOR map
    // of the change as it came in `changes`; a later change at the path, or
    // a successful retry, removes the row.
    "CREATE TABLE deferred (path TEXT PRIMARY KEY, change BLOB NOT NULL, reason TEXT NOT NULL) WITHOUT ROWID",
  ],
  [
    // The identity of the server rev at the pull cursor (protocol 3): hello
    // compares it with the server's to catch a server restored from an older
    // copy that then moved on. A store from before has none: its first
    // hello reconciles once.
    "ALTER TABLE host ADD COLUMN pull_rev_id BLOB",
  ],
  [
    // The server rev up to which this host has forgotten its acknowledged
    // tombstones, following the server's own (hello's tombstonesDropped):
    // kept so the forgetting runs once per rise, not at every hello.
    "ALTER TABLE host ADD COLUMN tombstones_pruned INTEGER NOT NULL DEFAULT 0",
  ],
  [
    // The scanner's fingerprint rows (store/fingerprint-rows.ts), all in one
    // string, as the last read of them from `paths` gave them: a no-op sync
    // reads this one value instead of a row per path (BENCHMARKS.md section
    // 17). A read leaves `rows` NULL here, and the store fills it in at
    // close. Any insert or delete of a path, or a change of its kind or
    // stat, deletes the row in the same statement (the triggers below),
    // whoever writes: so a row that is still here at close, and a value read
    // here, always equals what `paths` gives.
    "CREATE TABLE scan_rows (id INTEGER PRIMARY KEY CHECK (id = 1), rows TEXT)",
    "CREATE TRIGGER scan_rows_after_insert AFTER INSERT ON paths BEGIN DELETE FROM scan_rows; END",
    "CREATE TRIGGER scan_rows_after_delete AFTER DELETE ON paths BEGIN DELETE FROM scan_rows; END",
    "CREATE TRIGGER scan_rows_after_update AFTER UPDATE OF path, kind, stat ON paths BEGIN DELETE FROM scan_rows; END",
  ],
  [
    // The digest of the ignore rules under which this host last left server
    // paths alone (engine/ignored-left.ts); NULL when it left none since its
    // last whole-state compare. Rules that differ from it let some of those
    // paths go: the next sync compares the whole state again.
    "ALTER TABLE host ADD COLUMN ignored_left TEXT",
  ],
];

export const SCHEMA_VERSION = MIGRATIONS.length;
