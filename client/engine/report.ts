import type { EntryKind } from "../../protocol/entry.ts";
import type { Rename } from "./renames.ts";

/** What one sync did: deterministic counts for reports, tests and benchmarks. */
export interface SyncReport {
  /** Requests sent to the server (retries not included). */
  roundTrips: number;
  entriesSent: number;
  entriesReceived: number;
  /** The entries the server took, in the order sent (`entriesSent` of them). */
  sent: PathChange[];
  /** The server's entries this host received (`entriesReceived` of them; a reconcile receives every entry). */
  received: PathChange[];
  objectsSent: number;
  objectBytesSent: number;
  objectsReceived: number;
  objectBytesReceived: number;
  /** Local changes the scan stamped. */
  stamped: number;
  /** The host cursor the server had acknowledged at hello: where this push resumed. */
  resumedFrom: { rev: number; path: string | null };
  /** How the host caught up with the server (see SyncMode). */
  mode: SyncMode;
  /** Conflict copies written: where each local version was kept. */
  conflicts: { readonly path: string; readonly copy: string }[];
  /** Server entries refused because applying them would leave the root. */
  refused: { readonly path: string; readonly reason: string }[];
  /** Local paths that cannot be synced (invalid names, special files, unreadable). */
  skipped: { readonly path: string; readonly reason: string }[];
  /** The server's rev after the sync. */
  serverRev: number;
  ms: number;
  /** Paths of `sent` and `received` that moved with their content unchanged (renames.ts; the wire has no renames). */
  renamed: { sent: Rename[]; received: Rename[] };
  /** With `heal` (heal.ts): the objects the server had lost that this push uploaded again. */
  healed?: number;
}

/** One path that moved, and what it is now (`gone`: deleted). */
export interface PathChange {
  readonly path: string;
  readonly kind: EntryKind;
}

/**
 * - `incremental`: pulled from the saved cursor (or nothing to pull).
 * - `reconcile`: the host's position was unknown or stale (a lost store with
 *   a tree on disk, a store restored from an older copy, a pull cursor older
 *   than the tombstone horizon): compared its whole state with the server's,
 *   adopting what matches.
 * - `resync`: the server was restored (another epoch, or behind the host's
 *   cursor): compared the whole state, local differences win.
 */
export type SyncMode = "incremental" | "reconcile" | "resync";

export function emptyReport(): SyncReport {
  return {
    roundTrips: 0,
    entriesSent: 0,
    entriesReceived: 0,
    sent: [],
    received: [],
    objectsSent: 0,
    objectBytesSent: 0,
    objectsReceived: 0,
    objectBytesReceived: 0,
    stamped: 0,
    resumedFrom: { rev: 0, path: null },
    mode: "incremental",
    conflicts: [],
    refused: [],
    skipped: [],
    serverRev: 0,
    ms: 0,
    renamed: { sent: [], received: [] },
  };
}

/**
 * Progress of long work, for bars; every method is optional to implement
 * meaningfully. `begin` gives a task its total (again as it grows: a pull
 * learns its entries a page at a time; `more` says pages are still to come,
 * so the total so far is not the last). Work advanced with no `begin` has
 * no known total (the bytes uploaded while a scan still finds new ones).
 */
export interface ProgressSink {
  begin(task: ProgressTask, total: number, more?: boolean): void;
  advance(task: ProgressTask, delta: number): void;
  end(task: ProgressTask): void;
}

/** `scan` counts paths, `hash` (one large file), `upload` and `download` bytes, `push` and `pull` entries. */
export type ProgressTask = "scan" | "hash" | "upload" | "push" | "pull" | "download";

export const SILENT: ProgressSink = { begin() {}, advance() {}, end() {} };
