/**
 * What a garbage collection did (PROTOCOL.md §7.1, §7.10): the shape of
 * `lastCollection` in stats and of the admin route `POST …/gc`'s answer,
 * which `ferry gc` prints. JSON for people, not a CBOR message.
 */
/** What one collection did; every count is of things deleted or rewritten. */
export interface Freed {
  objects: number;
  /** Bytes of the objects deleted. */
  objectBytes: number;
  /** Bytes of storage released: packs deleted or rewritten smaller, and inline objects deleted. */
  storedBytes: number;
  /** Pack rows deleted: SQLite packs with nothing live, packs in R2 condemned longer than the pack grace. */
  packsDeleted: number;
  packsRewritten: number;
  /** Packs in R2 condemned (nothing wanted in them, or rewritten), deleted after the pack grace. */
  packsCondemned: number;
  /** Condemned packs in R2 brought back by the collection (an object in them wanted again). */
  packsRevived: number;
  /** Objects in R2 no pack row named, older than the pack grace, queued for deletion. */
  orphans: number;
  /** Objects deleted from R2 (packs past their grace, orphans). */
  r2Deleted: number;
  versions: number;
  tombstones: number;
  /** Rows the collection wrote (deletes and rewrites are billed as writes) and read. */
  rowsWritten: number;
  rowsRead: number;
  slices: number;
}

export interface LastCollection {
  readonly startedAt: number;
  readonly endedAt: number;
  /** The workspace's rev and newest pack when it started: a later write makes the next one due. */
  readonly rev: number;
  readonly lastPack: number;
  /** When something it kept expires (a version, a tombstone, an upload's grace); null when nothing will. */
  readonly nextDueAt: number | null;
  readonly freed: Freed;
}
