/**
 * The answer of `GET /v1/workspaces/{ws}/stats` (PROTOCOL.md §7.1): JSON for
 * people, not a CBOR message. The server builds it (worker/sync/stats.ts,
 * worker/sync/gc/usage.ts); the page, `ferry workspace stats` and bench:gc
 * read it, all through these types (type aliases, not interfaces, so a
 * parsed JSON record and these convert both ways).
 */

import type { LastCollection } from "./collection.ts";
import type { Cursor } from "./cursor.ts";

/** The tree's counts and the hosts that push to it. */
export type WorkspaceStats = {
  readonly rev: number;
  readonly epoch: string;
  readonly files: number;
  readonly dirs: number;
  readonly symlinks: number;
  readonly tombstones: number;
  readonly objects: number;
  readonly objectBytes: number;
  readonly hostCount: number;
  /** A host's `id` for a read-write token, its `tag` for a read-only one. */
  readonly hosts: readonly {
    readonly id?: string;
    readonly tag?: string;
    /** The readable name the host gave itself at hello (protocol/label.ts). */
    readonly label?: string;
    readonly acked: Cursor;
    /** The server rev through which the host holds every change, as far as the server heard; absent while unknown. */
    readonly pulled?: number;
    readonly lastSeen: string;
  }[];
};

/** How big a workspace is and why: `storage` in the stats answer. */
export type StorageUsage = {
  /** Bytes of the objects the current tree's files name (each object once). */
  readonly liveBytes: number;
  /** Bytes of the objects only retained versions name. */
  readonly historyBytes: number;
  /** Bytes of the objects nothing names: uploads within their grace, or what the next collection frees. */
  readonly unreferencedBytes: number;
  /** What the storage holds: every pack's bytes (dead ones in them included) and inline objects. */
  readonly storedBytes: number;
  /** What the object's storage holds (its SQLite database, index and tree included), against `capBytes` (§7.9). */
  readonly usedBytes: number;
  /** The storage cap new object bytes must fit under (FERRY_STORAGE_CAP); null while it is misconfigured. */
  readonly capBytes: number | null;
  readonly objects: number;
  readonly packs: number;
  readonly versions: number;
  readonly tombstones: number;
  /** Tombstones up to this rev may have been dropped: a pull cursor below it resyncs. */
  readonly tombstonesDroppedUpTo: number;
  /** The host heard from longest ago: a host quiet past the tombstone horizon resyncs at its next hello. */
  readonly oldestHost: { readonly lastSeen: string; readonly acked: { rev: number; path: string | null } } | null;
  readonly retention: {
    readonly history: string;
    readonly uploadGrace: string;
    readonly tombstoneHorizon: string;
    /** How long a pack in R2 nothing wants (or an orphan) is kept before its bytes are deleted (FERRY_PACK_GRACE). */
    readonly packGrace: string;
  } | null;
  readonly lastCollection: LastCollection | null;
  readonly collecting: boolean;
};

/**
 * The whole answer, as the Worker sends it. `packs`: where new object bytes
 * go, R2 packs or the object's SQLite (PROTOCOL.md §7.9), as /v1/health says.
 */
export type StatsAnswer = {
  readonly workspace: string;
  readonly packs: "r2" | "sqlite";
  /**
   * With `packs: "r2"`, the uploads and pushes whose objects the workspace's
   * object verified and wrote to R2 itself since it last started (socket
   * frames from hosts that do not list `http-uploads`): 0 while every host
   * sends its bytes through the Worker.
   */
  readonly ingestedByObject: number;
  readonly storage: StorageUsage;
} & WorkspaceStats;
