/**
 * The host store: identity, counters, cursors and per-path state. One
 * interface over SQLite on disk (WAL, `<root>/.ferry/store.db`) or in memory.
 * Synchronous, like better-sqlite3: the engine calls it between round trips.
 */
import type { Change } from "../../protocol/changes.ts";
import type { Cursor } from "../../protocol/cursor.ts";
import type { Entry } from "../../protocol/entry.ts";
import type { PullPosition } from "../../protocol/hello.ts";

export type StoreKind = "disk" | "memory";

/** What the host knows about one path. */
export interface PathRecord {
  /** The local state as last scanned or applied; `gone` for a local deletion not yet pushed. */
  readonly entry: Entry;
  /** Chunk lengths of a file, in order (empty for other kinds). */
  readonly sizes: readonly number[];
  /** Stat fingerprint of the path on disk; null means "read it again on the next scan". */
  readonly stat: string | null;
  /** Host rev of the last local change; 0 when the state came from the server. */
  readonly hostRev: number;
  /** Server rev of the state last agreed with the server; 0 when none (the push `base`). */
  readonly serverRev: number;
  /** Signature of the state last agreed with the server (see entrySignature), or null. */
  readonly agreed: Uint8Array | null;
}

/** A server change this host could not write, and why. */
export interface Deferred {
  readonly change: Change;
  readonly reason: string;
}

/** A server state a pull is about to write at a path (see `journalPull`). */
export interface PullIntent {
  readonly path: string;
  readonly rev: number;
  readonly signature: Uint8Array;
}

export interface StorePosition {
  /** The last host rev handed out. */
  readonly hostRev: number;
  /** The host cursor the server last acknowledged, as far as this host knows. */
  readonly acked: Cursor;
  /** Where pulling stands, or null before the first pull. */
  readonly pull: PullPosition | null;
}

export interface HostStore {
  readonly kind: StoreKind;
  /** 16 random bytes, created with the store. */
  readonly hostId: Uint8Array;

  position(): StorePosition;
  /** Reserves `count` new host revs and returns the first. */
  reserveHostRevs(count: number): number;
  /** Raises the host rev counter to at least `rev` (never lowers it). */
  raiseHostRev(rev: number): void;
  setAcked(acked: Cursor): void;
  setPull(pull: PullPosition | null): void;

  /**
   * Forgets the acknowledged tombstones (`gone` records not pending push)
   * agreed at server revs up to `upTo`, once the server has dropped its own
   * that far (hello's `tombstonesDropped`): a reconcile cannot need them,
   * since a server that has no tombstone there has forgotten the deletion
   * too. A no-op unless `upTo` is above the last call's; returns the count.
   */
  pruneTombstones(upTo: number): number;

  /**
   * The digest of the ignore rules (IgnoreRules.digest) under which this
   * host last left server paths alone (forgot a record the rules came to
   * ignore, or pulled past a change to an ignored path); null when it left
   * none since it last compared its whole state (engine/ignored-left.ts).
   */
  ignoredLeft(): string | null;
  setIgnoredLeft(digest: string | null): void;

  get(path: string): PathRecord | undefined;
  /** Every record, in path order. */
  all(): Iterable<PathRecord>;
  /**
   * Every path with its stat fingerprint and whether it is a tombstone, one
   * row per path sorted by path, the rows joined into one text
   * (fingerprint-rows.ts): what a scan compares against, cheaper than `all`.
   */
  fingerprints(): string;
  /**
   * Keeps the fingerprints last read for the next open to read at once, if
   * no path's record changed since (a no-op sync's next rescan); close()
   * does it too. The CLI, which leaves the store to its exit, calls it.
   */
  keepFingerprints(): void;
  /** Records strictly under `dir` (not `dir` itself). */
  under(dir: string): PathRecord[];
  /** Local changes with host rev above `afterRev`, in host rev order. */
  pending(afterRev: number, limit: number): PathRecord[];
  pendingCount(afterRev: number): number;
  /** Local deletions pending push (host rev above `afterRev`) of paths the server has: what the push would delete. */
  pendingDeletions(afterRev: number): number;
  /** Paths the host holds (every record but tombstones): the tree a mass deletion is measured against. */
  livePaths(): number;
  put(record: PathRecord): void;
  /** Records that the server holds the path's current state (after a push). */
  markAgreed(path: string, serverRev: number, agreed: Uint8Array): void;
  remove(path: string): void;

  /** Server changes the applier refused, to retry on the next pull (pull.ts), in path order. */
  deferred(): Deferred[];
  /** Keeps a refused change for the next pull, replacing an older one at its path. */
  defer(deferred: Deferred): void;
  /** Forgets the refused change at `path`, if any (written since, or superseded). */
  undefer(path: string): void;
  /** Journals the states a pull page is about to write (replacing any journal left). */
  journalPull(intents: readonly PullIntent[]): void;
  /** The journal a pull killed mid-page left (empty after a clean pull). */
  pullJournal(): PullIntent[];
  clearPullJournal(): void;

  /** A path whose recorded file holds the chunk, if any (verify the bytes before use). */
  chunkSource(hash: Uint8Array): string | undefined;
  /** True when some chunk has a source (a pull's fetcher asks once, then only when some does). */
  hasChunkSources(): boolean;

  /** Runs `fn` in one transaction (nested calls join the outer one). */
  transaction<T>(fn: () => T): T;
  close(): void;
}
