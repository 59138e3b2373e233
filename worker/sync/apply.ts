/**
 * Applies one change-pack inside push's transaction. Every check reads
 * first and returns its refusal before anything is written, so a refused
 * pack changes nothing; an accepted one takes one new rev for all it writes.
 */

import { type Conflict, conflictError } from "../../protocol/conflict.ts";
import { compareCursors, cursorsEqual, ORIGIN } from "../../protocol/cursor.ts";
import { ProtocolError } from "../../protocol/errors.ts";
import { hashCount, hashesEqual } from "../../protocol/hash.ts";
import { LIMITS } from "../../protocol/limits.ts";
import { subtreeRange } from "../../protocol/paths.ts";
import type { PushEntry, PushRequest, PushResponse } from "../../protocol/push.ts";
import { type Carried, checkChunks } from "./chunk-check.ts";
import type { Db, SyncContext } from "./db.ts";
import { deletedAt, workspaceDeleted } from "./deleted-histories.ts";
import { jsonWindows, readEntries, type StoredEntry, sameStoredFields, writeEntries } from "./entries.ts";
import { readHead, recordRev, revIdMatches, saveReplacedStates } from "./history.ts";
import { readAcked, recordAcked } from "./hosts.ts";
import { goneOverLiveDescendants } from "./orphans.ts";
import { storeObjects } from "./packs.ts";
import { recordPacked } from "./r2-record.ts";
import { findSubtreeConflicts } from "./subtree-conflicts.ts";
import { ancestorsOf, checkTree } from "./tree.ts";

export function applyPack(ctx: SyncContext, req: PushRequest): PushResponse | ProtocolError {
  const { db, now, capacity } = ctx;
  const acked = readAcked(db, req.hostId);
  // Already applied (a retry after a lost answer): acknowledge again, write nothing.
  if (compareCursors(req.end, acked) <= 0) return { ...readHeadRev(db), acked, applied: false, committed: false };
  // A host unknown to this history that was a host of one deleted here: its
  // hello came before the delete, and its pack would bring the tree back (§4.5).
  const deleted = cursorsEqual(acked, ORIGIN) ? deletedAt(db, req.hostId, undefined) : null;
  if (deleted !== null) return workspaceDeleted(deleted);
  if (req.pulled !== undefined && req.pulledId !== undefined && !revIdMatches(db, req.pulled, req.pulledId)) {
    // The host's pull position is another history's (a restore): its bases and `pulled` cannot be trusted.
    const { epoch, rev } = readHead(db);
    return new ProtocolError("cursor_mismatch", "pulled rev is not this history's; resync", { epoch, rev });
  }
  if (!cursorsEqual(req.start, acked)) {
    return new ProtocolError("cursor_mismatch", "pack does not start at the acknowledged host cursor", { acked });
  }
  // A file's chunk list is stored inline in its row, and a row holds at most 2 MB.
  const huge = req.entries.find((e) => e.kind === "file" && hashCount(e.chunks) > LIMITS.maxFileChunks);
  if (huge) {
    return new ProtocolError("payload_too_large", `${huge.path}: more than ${LIMITS.maxFileChunks} chunks`, {
      path: huge.path,
      limit: LIMITS.maxFileChunks,
    });
  }

  const ancestors = ancestorsOf(req.entries);
  if (ancestors instanceof ProtocolError) return ancestors;
  // A stored chunk list is read only where it may equal the pushed one (entries.ts, readEntries).
  const pushedChunks = new Map<string, number>();
  for (const e of req.entries) if (e.kind === "file") pushedChunks.set(e.path, e.chunks.byteLength);
  const stored = readEntries(
    db,
    [...req.entries.map((e) => e.path), ...ancestors],
    (path, chunkBytes) => (pushedChunks.get(path) ?? -1) === chunkBytes,
  );
  const orphaning = goneOverLiveDescendants(db, req.entries, stored);
  const changed = req.entries.filter((e) => isChange(e, stored.get(e.path)) || orphaning.has(e.path));
  // In PROTOCOL.md §4.5's order: the first refusal that applies decides.
  const refusal =
    checkChunks(db, carried(ctx, req), changed) ??
    findConflicts(db, req, stored, changed) ??
    checkTree(req.entries, stored, new Set(changed.map((e) => e.path)));
  if (refusal) return refusal;

  if (ctx.packed === undefined) storeObjects(db, req.objects, now(), { capacity });
  else recordPacked(ctx, ctx.packed, { restartGrace: false });
  let { rev, revId } = readHeadRev(db);
  const at = now();
  if (changed.length > 0) {
    rev += 1;
    const paths = changed.map((e) => e.path);
    const roots = changed.filter((e) => e.kind !== "dir").map((e) => e.path);
    saveReplacedStates(db, paths, roots, rev);
    const written = new Set([...tombstoneSubtrees(db, roots, rev, req.hostId), ...paths]);
    writeEntries(db, changed, rev, req.hostId);
    const bytes = changed.reduce((sum, e) => sum + (e.kind === "file" ? e.size : 0), 0);
    revId = recordRev(db, { rev, at, host: req.hostId, entries: written.size, bytes });
  }
  // The host holds every change through `pulled`, and through the rev it just wrote when that follows (push.ts, recordPushed).
  const pulled =
    req.pulled === undefined
      ? undefined
      : changed.length > 0 && req.pulled === rev - 1
        ? rev
        : Math.min(req.pulled, rev);
  recordAcked(db, req.hostId, req.end, at, pulled);
  // Not committed, `rev` is the head: other hosts' changes may be all it holds, so no host moves its pull cursor to it.
  return { rev, acked: req.end, applied: true, committed: changed.length > 0, ...(revId ? { revId } : {}) };
}

/** The current rev and its identity (none at rev 0). */
function readHeadRev(db: Db): { rev: number; revId?: Uint8Array } {
  const { rev, revId } = readHead(db);
  return revId ? { rev, revId } : { rev };
}

/** An entry changes its path unless it repeats the stored state (or tombstones a path never stored). */
function isChange(e: PushEntry, kept: StoredEntry | undefined): boolean {
  return kept ? !sameStoredFields(e, kept) : e.kind !== "gone";
}

/**
 * An entry with `base` conflicts when the stored state is newer than the
 * state the host agreed with and another host wrote it. Repeating the
 * stored state, or writing over a tombstone, is never a conflict. So does a live path under one the pack
 * replaces that the host never saw (subtree-conflicts.ts).
 */
function findConflicts(
  db: Db,
  req: PushRequest,
  stored: ReadonlyMap<string, StoredEntry>,
  changed: readonly PushEntry[],
): ProtocolError | null {
  const conflicts: Conflict[] = [];
  for (const e of req.entries) {
    const kept = stored.get(e.path);
    if (e.base === undefined || !kept || kept.rev <= e.base) continue;
    if (hashesEqual(kept.origin, req.hostId) || sameStoredFields(e, kept)) continue;
    // A deletion holds no work to lose: what is written over it wins, as the host's pull would decide.
    if (kept.kind === "gone") continue;
    conflicts.push({ path: e.path, rev: kept.rev });
  }
  conflicts.push(...findSubtreeConflicts(db, req, changed));
  return conflicts.length === 0 ? null : conflictError(conflicts);
}

/**
 * A path that stops being a directory takes its subtree with it: every live
 * path under it becomes a tombstone at `rev`; returns their paths. One range seek per root on the
 * path primary key; entries of the pack under a root are written afterwards
 * and win.
 */
function tombstoneSubtrees(db: Db, roots: readonly string[], rev: number, origin: Uint8Array): string[] {
  const tombstoned: string[] = [];
  for (const json of jsonWindows(roots.map(subtreeRange))) {
    const { rows } = db.exec<{ path: string }>(
      `UPDATE entries SET rev = ?1, kind = 'gone', mode = NULL, mtime = NULL, size = NULL, chunks = NULL,
         target = NULL, origin = ?2
       WHERE kind != 'gone' AND path IN (
         SELECT e.path FROM json_each(?3) j CROSS JOIN entries e
         WHERE e.path >= j.value ->> '$.from' AND e.path < j.value ->> '$.to')
       RETURNING path`,
      rev,
      origin,
      json,
    );
    for (const row of rows) tombstoned.push(row.path);
  }
  return tombstoned;
}

/** The chunks a push carries and their sizes: its inline objects, or with R2 the packs they became (db.ts `packed`). */
function carried(ctx: SyncContext, req: PushRequest): readonly Carried[] {
  if (ctx.packed === undefined) return req.objects.map((o) => ({ hash: o.hash, size: o.bytes.byteLength }));
  return [
    ...ctx.packed.inline.map((o) => ({ hash: o.hash, size: o.bytes.byteLength })),
    ...ctx.packed.packs.flatMap((p) => p.members),
  ];
}
