/**
 * The workspace's SQLite schema: ordered migrations of idempotent DDL, run
 * in one transaction when the object starts. `meta.schema_version` names the
 * last one applied. Append migrations; never edit one that has shipped, and
 * write literal values in them, never a live constant: a constant that later
 * changes would rewrite history for storage that has not migrated yet.
 *
 * Billed rows shaped this schema: writing a new one-chunk file costs three
 * rows (its entry, the entry's one index row, its object), so every table is
 * WITHOUT ROWID keyed by what it is looked up by, and entries has exactly one
 * secondary index. Since migration 2 an object's bytes are appended to a
 * pack shared by ~1 MiB of objects (or kept in its row when tiny), so a file
 * adds a fraction of a pack row to its three.
 */
import type { Db } from "../sync/db.ts";

const MIGRATIONS: readonly (readonly string[])[] = [
  [
    // Facts about the workspace: schema_version, and the epoch (16 random
    // bytes naming this history, created with the storage).
    `CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID`,

    // The current state of every path ever written, one row per path. A
    // tombstone is a row with kind 'gone'; tombstones are kept forever in
    // this version so any saved cursor, however old, still sees deletions.
    // Primary key `path` (bytewise order) serves push's point lookups by path
    // and its subtree ranges [p/, p0) when a type change replaces a subtree.
    `CREATE TABLE IF NOT EXISTS entries (
      path TEXT PRIMARY KEY,
      rev INTEGER NOT NULL,
      kind TEXT NOT NULL CHECK (kind IN ('file', 'dir', 'symlink', 'gone')),
      mode INTEGER,
      mtime INTEGER,
      size INTEGER,
      chunks BLOB,
      target TEXT,
      origin BLOB NOT NULL
    ) WITHOUT ROWID`,
    // changes: keyset pages `WHERE (rev, path) > (?, ?) ORDER BY rev, path`
    // (and, until migration 3's revs table, the current rev from its last key).
    `CREATE INDEX IF NOT EXISTS entries_by_rev ON entries (rev, path)`,

    // Chunk bytes by SHA-256: has, objects/get, and push's referential check
    // all seek by hash. Rows are never updated (INSERT OR IGNORE).
    `CREATE TABLE IF NOT EXISTS objects (hash BLOB PRIMARY KEY, bytes BLOB NOT NULL) WITHOUT ROWID`,

    // Per host id: the host cursor acknowledged (hello, push) and when the
    // host was last heard from (stats).
    `CREATE TABLE IF NOT EXISTS hosts (
      id BLOB PRIMARY KEY,
      acked_rev INTEGER NOT NULL,
      acked_path TEXT,
      last_seen INTEGER NOT NULL
    ) WITHOUT ROWID`,
  ],
  [
    // Objects in packs (worker/sync/packs.ts). Migration 1 kept each
    // object's bytes in its row of a WITHOUT ROWID table: an index B-tree,
    // whose interior cells are whole rows, so a seek past a 1 MiB row read
    // all of it, and small objects wasted most of an overflow page each.
    // Storing, reading and probing 146 MiB of an npm tree took 3 s, 13 s and
    // 4.5 s in workerd (bench/sqlite/object-store-timing.test.ts).
    //
    // Now bytes live in `packs`, a rowid table (its interior cells are
    // integers) of concatenated objects up to ~1 MiB, appended. `objects` is
    // the index by hash, one small row per object: the pack and the slice,
    // or for a tiny object (64 bytes or less, INLINE_BYTES when this shipped) its bytes inline, which saves the
    // pack row a push of tiny files would otherwise add to its three rows a
    // file (test/worker/billing.test.ts).
    //
    // The old rows are copied once: each object becomes a pack of its own
    // (or inline). ferry is not deployed, so only local workspaces take this
    // one-shot cost.
    `ALTER TABLE objects RENAME TO objects_v1`,
    `CREATE TABLE IF NOT EXISTS packs (id INTEGER PRIMARY KEY, bytes BLOB NOT NULL)`,
    // has, objects/get and push's referential check seek by hash; objects/get
    // reads a packed object's bytes from packs by id. Rows are never updated.
    `CREATE TABLE IF NOT EXISTS objects (
      hash BLOB PRIMARY KEY,
      pack INTEGER,
      offset INTEGER NOT NULL,
      size INTEGER NOT NULL,
      bytes BLOB,
      CHECK ((pack IS NULL) = (bytes IS NOT NULL))
    ) WITHOUT ROWID`,
    `INSERT INTO packs (id, bytes)
     SELECT row_number() OVER (ORDER BY hash), bytes FROM objects_v1 WHERE length(bytes) > 64`,
    `INSERT INTO objects (hash, pack, offset, size, bytes)
     SELECT hash, row_number() OVER (ORDER BY hash), 0, length(bytes), NULL
     FROM objects_v1 WHERE length(bytes) > 64`,
    `INSERT INTO objects (hash, pack, offset, size, bytes)
     SELECT hash, NULL, 0, length(bytes), bytes FROM objects_v1 WHERE length(bytes) <= 64`,
    `DROP TABLE objects_v1`,
  ],
  [
    // History (worker/sync/history.ts), written by push's apply path in the
    // pack's transaction. Read by hello (rev identity), reconcile (a path's
    // earlier states), and by GC, retention, `ferry log`/`restore` and the
    // workspace page.
    //
    // One row per committed rev: when (`at`, the injected clock, ms), which
    // host pushed it, how many entries it wrote, and `id`, 16 random bytes
    // naming this rev in this history: a host keeps the id of the rev at its
    // pull cursor, and hello finding another id (or none) there means the
    // storage was restored from an older copy that then moved on. The
    // primary key (the rowid) serves the current rev (its last key), hello's
    // point lookup, and the page's recent revs (ORDER BY rev DESC LIMIT n).
    // One row written per rev, no index.
    `CREATE TABLE IF NOT EXISTS revs (
      rev INTEGER PRIMARY KEY,
      at INTEGER NOT NULL,
      host BLOB NOT NULL,
      id BLOB NOT NULL,
      entries INTEGER NOT NULL
    )`,
    // Revs of a workspace older than this migration: one row per rev that
    // entries still show, with unknown time (0) and a fresh id.
    `INSERT OR IGNORE INTO revs (rev, at, host, id, entries)
     SELECT rev, 0, min(origin), randomblob(16), count(*) FROM entries GROUP BY rev`,
    // The states a rev replaced: when an accepted pack overwrites a live
    // path, or deletes it (a subtree tombstoned under a path that stopped
    // being a directory included), the state it had is copied here first.
    // `rev` wrote that state and `until_rev` replaced it; tombstones are not
    // kept (a path was gone between one version's until_rev and the next
    // state's rev). The primary key (path, rev) serves `ferry log <path>`
    // and the page's versions of a file (WHERE path = ? ORDER BY rev DESC),
    // and reconcile's earlier states of a window of paths. No secondary
    // index: an overwrite costs this one row more; retention's pruning
    // (WHERE until_rev <= ?) scans, as GC's reachability walk over every
    // version's chunks does anyway.
    `CREATE TABLE IF NOT EXISTS versions (
      path TEXT NOT NULL,
      rev INTEGER NOT NULL,
      until_rev INTEGER NOT NULL,
      kind TEXT NOT NULL CHECK (kind IN ('file', 'dir', 'symlink')),
      mode INTEGER,
      mtime INTEGER,
      size INTEGER,
      chunks BLOB,
      target TEXT,
      origin BLOB NOT NULL,
      PRIMARY KEY (path, rev)
    ) WITHOUT ROWID`,
  ],
  [
    // Garbage collection (worker/sync/gc/). An object's upload time (ms, the
    // injected clock) starts its grace: an object nothing names is kept that
    // long, so a push in flight can still name it (worker/sync/retention.ts).
    // Written in the object's own index row: no row more per object. NULL
    // for objects stored before this migration, which are past any grace.
    // The collector's state is two rows of meta (gc/summary.ts).
    `ALTER TABLE objects ADD COLUMN at INTEGER`,
  ],
  // 5 (entries) and 6 (page): slots held for their owners (COORDINATION.md);
  // empty until they land, which never shipped, so they may still fill them.
  [],
  [],
  [
    // Host labels (protocol/label.ts): the readable name a host asks for at
    // hello, unique per workspace (UNIQUE: its index serves hello's "is this
    // label taken" lookup, hosts.ts assignLabel). A table of its own, not a
    // hosts column: written only when a label changes, never by the acked
    // updates of every push; and CREATE ... IF NOT EXISTS, idempotent.
    `CREATE TABLE IF NOT EXISTS host_labels (
      id BLOB PRIMARY KEY,
      label TEXT NOT NULL UNIQUE
    ) WITHOUT ROWID`,
  ],
  [
    // How far each host has pulled (stats' `pulled`: the workspace page's
    // "how far behind"): the server rev through which it holds every change,
    // as its last hello, push or last changes page said; NULL while unknown.
    // A hosts column, so push's acked update carries it in the row it already
    // writes (hosts.ts).
    `ALTER TABLE hosts ADD COLUMN pulled_rev INTEGER`,
    // The bytes of the files each rev wrote (the page's chart of bytes over
    // time, activity.ts), in the revs row push already writes; 0 for revs
    // committed before this migration.
    `ALTER TABLE revs ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0`,
  ],
  [
    // The histories this workspace deleted (worker/sync/deleted-histories.ts):
    // the epoch of each and when, carried across the wipe by worker/do/admin.ts.
    // hello seeks a host's pull epoch here when it is not the current one.
    `CREATE TABLE IF NOT EXISTS deleted_histories (epoch BLOB PRIMARY KEY, at INTEGER NOT NULL) WITHOUT ROWID`,
  ],
  [
    // The hosts those histories knew, by id, and when their history was
    // deleted: hello seeks a host with no pull position here (a host that
    // only pushed), unless the hosts table has heard from it since.
    `CREATE TABLE IF NOT EXISTS deleted_hosts (id BLOB PRIMARY KEY, at INTEGER NOT NULL) WITHOUT ROWID`,
  ],
  [
    // Packs in R2 (worker/r2/, PROTOCOL.md §7.9): a pack row says where its
    // bytes are, in the row (`bytes`, as before) or in the workspace's R2
    // bucket under `r2_key` (`ws/<workspace>/<sha256 of the pack>`, the
    // bytes never in this object); `size` is the pack's byte length either
    // way (for an R2 pack, the whole object, header included: what
    // `workspace check` compares R2's length with). `state` and
    // `condemned_at` are the collector's two phases (worker/sync/gc/): a
    // live pack, or one condemned at that time (ms), deleted after the
    // grace unless a push or upload naming one of its chunks revives it.
    //
    // SQLite cannot drop a NOT NULL with ALTER, so the table is rebuilt:
    // every SQLite pack is copied once, stays in its row, and reads as
    // before. ferry is not deployed (migration 2), so only local
    // workspaces take this one-shot cost.
    `CREATE TABLE packs_v11 (
      id INTEGER PRIMARY KEY,
      bytes BLOB,
      r2_key TEXT,
      size INTEGER NOT NULL,
      state TEXT NOT NULL DEFAULT 'live' CHECK (state IN ('live', 'condemned')),
      condemned_at INTEGER,
      CHECK ((bytes IS NULL) = (r2_key IS NOT NULL)),
      CHECK ((state = 'condemned') = (condemned_at IS NOT NULL))
    )`,
    `INSERT INTO packs_v11 (id, bytes, size) SELECT id, bytes, length(bytes) FROM packs`,
    `DROP TABLE packs`,
    `ALTER TABLE packs_v11 RENAME TO packs`,
    // An upload retried after its packs reached R2 records the same key
    // again: the Worker's record call seeks it here (worker/r2/record.ts)
    // and adds no second row. Partial: SQLite packs have no key, no row.
    `CREATE UNIQUE INDEX IF NOT EXISTS packs_by_r2_key ON packs (r2_key) WHERE r2_key IS NOT NULL`,
  ],
  [
    // The collector's two phases for packs in R2 (worker/sync/gc/, PROTOCOL.md §7.9). Condemned packs,
    // by when: every write asks whether any exists (revive.ts, one seek when none does), and nothing
    // else touches this index: a live pack, every pack an upload adds, is not in it.
    `CREATE INDEX IF NOT EXISTS packs_condemned ON packs (condemned_at) WHERE state = 'condemned'`,
    // R2 objects on their way out (gc/r2-deletes.ts): a key queued when the rows naming it are gone
    // (deleted_at null), then deleted from R2 in batches and kept a pack grace more, done, so an
    // upload that found those bytes in R2 before the delete is refused once and puts them again.
    `CREATE TABLE IF NOT EXISTS pack_deletes (
      key TEXT PRIMARY KEY,
      queued_at INTEGER NOT NULL,
      deleted_at INTEGER
    ) WITHOUT ROWID`,
    // Objects the listing of the R2 prefix found that no pack row names (gc/r2-orphans.ts), by when
    // first seen, on the object's clock: one still unnamed a pack grace later is queued for deletion.
    `CREATE TABLE IF NOT EXISTS orphans_seen (key TEXT PRIMARY KEY, seen_at INTEGER NOT NULL) WITHOUT ROWID`,
  ],
  [
    // Objects whose stored bytes were found missing or wrong (worker/sync/damaged.ts, PROTOCOL.md
    // §7.11), by hash, and when: their index rows were deleted, so `has` answers them missing and a
    // host's next upload stores them anew, which deletes the row here. The check lists this table;
    // objects/get and file seek it for the hashes they could not answer. Empty in a healthy workspace.
    `CREATE TABLE IF NOT EXISTS damaged_objects (hash BLOB PRIMARY KEY, found_at INTEGER NOT NULL) WITHOUT ROWID`,
  ],
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Brings the schema up to date and creates the epoch if this storage has
 * none. Called from the object's constructor; cheap when already current.
 */
export function migrate(db: Db, newEpoch: Uint8Array): void {
  db.transaction(() => {
    db.exec(`CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID`);
    const { rows } = db.exec<{ value: number }>(`SELECT value FROM meta WHERE key = 'schema_version'`);
    const from = rows[0]?.value ?? 0;
    if (from > SCHEMA_VERSION) {
      // A newer build wrote this storage; running older code over it could corrupt it.
      throw new Error(`schema version ${from} is newer than this build's ${SCHEMA_VERSION}`);
    }
    for (let v = from; v < SCHEMA_VERSION; v++) {
      for (const statement of MIGRATIONS[v] as readonly string[]) db.exec(statement);
    }
    if (from < SCHEMA_VERSION) {
      db.exec(`INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)`, SCHEMA_VERSION);
    }
    db.exec(`INSERT OR IGNORE INTO meta (key, value) VALUES ('epoch', ?)`, newEpoch);
  });
}
