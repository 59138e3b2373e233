/**
 * An upload whose packs are in R2, recorded (PROTOCOL.md §7.9): bytes,
 * then index, then rev. The packs were written before this is called
 * (r2-ingest.ts, in the Worker or the object); here, in one transaction of
 * the object, a pack row per key (never twice: a retry records the same
 * key), an index row per chunk not already held, and for every chunk held
 * a fresh upload time, restarting the grace as objects/put does (§7.9).
 * Only now can `has` or a push see them.
 */
import { ProtocolError } from "../../protocol/errors.ts";
import { toHex } from "../../protocol/hash.ts";
import { ensureRoom } from "./capacity.ts";
import type { SyncContext } from "./db.ts";
import { keysToWaitFor, queuedForDeletion } from "./gc/r2-deletes.ts";
import { probeHashes } from "./hash-list.ts";
import { readEpoch } from "./meta.ts";
import type { PackedUpload, StoredPack } from "./pack-store.ts";
import { nextPackId, type Placed, touchUploads, writeIndex } from "./packs.ts";

/**
 * What one index row costs the object's storage, as the cap counts an
 * upload whose bytes are in R2 (capacity.ts): the 32-byte hash, pack id,
 * offset, size and upload time in a WITHOUT ROWID row, with its record
 * header, cell pointer and B-tree page slack (PROTOCOL.md §7.9 states it
 * with the workspace size it allows).
 */
export const INDEX_ROW_BYTES = 80;

/** Records `upload` in a transaction of its own; returns how many chunks became newly held. Throws `workspace_full` (rolled back) past the cap. */
export function recordUpload(ctx: SyncContext, upload: PackedUpload): number {
  // A pack whose key the collector is deleting, or deleted a moment ago, may have been found in R2 by
  // the ingest's put before the delete: refused once (retryable), the retry puts it anew (gc/r2-deletes.ts).
  const wait = ctx.db.transaction(() =>
    keysToWaitFor(
      ctx.db,
      upload.packs.map((p) => p.key),
    ),
  );
  if (wait.length > 0) {
    throw new ProtocolError("unavailable", `pack ${wait[0]} was being deleted; upload it again`, { key: wait[0] });
  }
  return ctx.db.transaction(() => recordPacked(ctx, upload, { restartGrace: true }));
}

/**
 * Records `upload` inside the caller's transaction: an upload's (restarting
 * the grace of chunks already held), or a push's when it commits (apply.ts:
 * a push names what it carries, so it touches no held chunk's row).
 */
export function recordPacked(
  { db, now, onWrite, capacity }: SyncContext,
  upload: PackedUpload,
  { restartGrace }: { restartGrace: boolean },
): number {
  const at = now();
  // Written for a history `workspace delete` has ended since the ingest probed (admin.ts): the new one
  // starts empty, and the Worker deletes the packs (r2-ingest.ts recordOrForget).
  if (upload.history !== toHex(readEpoch(db))) {
    throw new ProtocolError("unavailable", "the workspace was deleted while these objects were written; send again", {
      history: HISTORY_GONE,
    });
  }
  // A push's packs (recordUpload checked an upload's already): refused while the collector deletes one.
  const queued = upload.packs.find((p) => queuedForDeletion(db, p.key));
  if (queued !== undefined) {
    throw new ProtocolError("unavailable", `pack ${queued.key} was being deleted; send it again`, { key: queued.key });
  }
  const candidates: (Placed & { readonly key: string | null })[] = [
    ...upload.inline.map((o) => ({
      hash: o.hash,
      pack: null,
      offset: 0,
      size: o.bytes.byteLength,
      bytes: o.bytes,
      key: null,
    })),
    ...upload.packs.flatMap((p) => p.members.map((m) => ({ ...m, pack: null, bytes: null, key: p.key }))),
  ];
  // Probed again here, in the transaction: another upload may have stored some since the ingest's probe.
  const held = probeHashes(
    db,
    candidates.map((c) => c.hash),
  );
  const fresh = candidates.filter((_, i) => !held[i]);
  ensureRoom(
    capacity,
    fresh.reduce((n, c) => n + INDEX_ROW_BYTES + (c.key === null ? c.size : 0), 0),
  );
  if (restartGrace) touchUploads(db, upload.hashes, at);
  const ids = new Map(upload.packs.map((p) => [p.key, packIdFor(db, p)]));
  writeIndex(
    db,
    fresh.map(({ key, ...c }) => (key === null ? c : { ...c, pack: ids.get(key) as number })),
    at,
  );
  // The ingest left out what its probe found held; the collector may have deleted some of those since
  // (garbage, past its grace). Answering "stored" would send the host on to a push refused
  // missing_objects: an upload is refused whole instead (retryable), the retry's probe finds them missing.
  if (restartGrace && probeHashes(db, upload.hashes).includes(false)) {
    throw new ProtocolError("unavailable", "an object this upload found held was collected meanwhile; upload again");
  }
  // Every hash, held or new: the collector brings back a condemned pack holding one (gc/revive.ts).
  onWrite?.(upload.hashes);
  return fresh.length;
}

/** The detail `history` of a refusal for a history `workspace delete` ended (recordPacked). */
const HISTORY_GONE = "deleted";

/** Whether `e` refused an upload or push whose packs were written for a deleted history (recordPacked). */
export function historyGone(e: unknown): boolean {
  return e instanceof ProtocolError && e.details.history === HISTORY_GONE;
}

/**
 * The id of the pack row naming `pack`'s key, added when there is none. A
 * pack whose chunks were all held by the time it is recorded gets its row
 * too: the collector then finds it with nothing live and deletes it, not
 * an orphan left for the listing of the prefix.
 */
function packIdFor(db: SyncContext["db"], pack: StoredPack): number {
  const row = db.exec<{ id: number }>(`SELECT id FROM packs WHERE r2_key = ?`, pack.key).rows[0];
  if (row !== undefined) return row.id;
  const id = nextPackId(db);
  db.exec(`INSERT INTO packs (id, r2_key, size) VALUES (?, ?, ?)`, id, pack.key, pack.size);
  return id;
}
