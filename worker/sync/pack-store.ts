/**
 * The packs that are not in the object's SQLite (PROTOCOL.md §7.9): the
 * workspace's prefix of the R2 bucket, as the object sees it when
 * `env.PACKS` is bound (worker/r2/bucket-store.ts). A port, so worker/sync
 * stays free of cloudflare:* and the core suites run without it: no port,
 * no R2 packs, every pack in SQLite as before.
 */

/** A slice of a pack object: `size` bytes from `offset`. */
export interface ByteRange {
  readonly offset: number;
  readonly size: number;
}

import type { ObjectBlob } from "../../protocol/objects.ts";

export interface PackStore {
  /** Whether uploads go to R2 (worker/env.ts FERRY_PACKS): else new packs stay in SQLite, these only read. */
  readonly takesUploads: boolean;
  /**
   * Each range's bytes of the pack under `key`, in the order asked; null
   * when the pack is not there (a broken invariant for a caller that read
   * its key from a live index row: the collector deletes R2 packs only
   * after their grace).
   */
  readRanges(key: string, ranges: readonly ByteRange[]): Promise<Uint8Array[] | null>;
  /**
   * Writes `chunks` as one pack (worker/r2/pack-format.ts: a header naming
   * each, then their bytes) under the prefix of the workspace's `history`
   * (its epoch, hex: a deleted workspace's packs and a new one's never
   * share a key), named by its SHA-256, with R2's SHA-256 check and create-only: a pack already there
   * (a retry, the same chunks in the same order) is not written again.
   * Resolves once R2 holds it; rejects, recording nothing, when it does not.
   */
  writePack(chunks: readonly ObjectBlob[], history: string): Promise<StoredPack>;
  /**
   * Deletes the packs under `keys` (at most 1,000, R2's most a call); a key
   * not there is no error. The collector's alone (worker/sync/gc/r2-deletes.ts),
   * after the rows naming them are gone.
   */
  deletePacks(keys: readonly string[]): Promise<void>;
  /**
   * One page of the keys under the workspace's prefix after `cursor` (null:
   * from the start), and where the next page starts (null: none): the
   * collector's listing for orphans (worker/sync/gc/r2-orphans.ts).
   */
  listPacks(cursor: string | null): Promise<{ keys: string[]; cursor: string | null }>;
}

/** One chunk of a stored pack: its hash and its slice of the pack object. */
export interface PackMember extends ByteRange {
  readonly hash: Uint8Array;
}

/** A pack in R2 as the index records it: its key, its whole length, its chunks. */
export interface StoredPack {
  readonly key: string;
  readonly size: number;
  readonly members: readonly PackMember[];
}

/** An upload the ingest verified and put in packs: its packs, its tiny chunks (inline), and every distinct hash. */
export interface PackedUpload {
  readonly packs: readonly StoredPack[];
  readonly inline: readonly ObjectBlob[];
  /** Every distinct hash the upload carried: those already held get a fresh upload time. */
  readonly hashes: readonly Uint8Array[];
  /**
   * The workspace's epoch (hex) when the ingest probed it, under whose prefix
   * the packs were written: recorded only while it is still the workspace's
   * (r2-record.ts), so an upload racing `workspace delete` lands nowhere.
   */
  readonly history: string;
}
