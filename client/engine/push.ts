/**
 * Pushing: the host's changes after the server's `acked`, in host rev order,
 * in packs bounded by the advertised limits. For each pack: probe its chunks
 * with `has`, upload the missing ones (inline when the whole pack fits one
 * body, else in `objects` batches), then `push` from `acked`. The server's
 * answer moves `acked`; a `cursor_mismatch` resumes exactly at the server's
 * `acked`, so an interrupted push continues where the server stands.
 * A `conflict` is thrown to the engine, which pulls and pushes again.
 */

import { join } from "node:path";
import { type Cursor, cursorsEqual, wholeRevsThrough } from "../../protocol/cursor.ts";
import { ackedOf, missingOf } from "../../protocol/error-details.ts";
import { hashesEqual, toHex } from "../../protocol/hash.ts";
import { type PushEntry, type PushResponse, pushEntryOf } from "../../protocol/push.ts";
import { entrySignature, signatureMatches } from "../common/entry-state.ts";
import { trace, traceEntry } from "../common/trace.ts";
import type { PathRecord } from "../store/store.ts";
import type { EngineContext } from "./context.ts";
import { type EmptiedDirsView, removeEmptiedParents } from "./emptied-dirs.ts";
import { HeldFiles } from "./held-files.ts";
import { bodyBudget, entryItemBudget, estimateEntryBytes, OBJECT_OVERHEAD, takePack } from "./pack-size.ts";
import { probe, readObjects, refsOf, StaleFile, upload } from "./push-objects.ts";
import { ledgerOf } from "./renames.ts";
import { mayHoldObjects } from "./uploads.ts";

/**
 * A pack whose chunks are this small is sent inline without a `has` probe:
 * one round trip instead of two, which is most of the latency of a one-file
 * change under `sync --watch`, and a third of a `ferry sync` of a commit's
 * few dozen files (BENCHMARKS.md section 15). At worst it resends 256 KiB the
 * server holds (files renamed or copied): ~20 ms at 100 Mbit/s, about what
 * the probe's round trip costs; the server verifies and stores each object
 * once either way.
 */
const UNPROBED_MAX_CHUNKS = 128;
const UNPROBED_MAX_BYTES = 256 * 1024;

export async function pushPending(ctx: EngineContext): Promise<void> {
  const { limits } = ctx.server;
  const budget = bodyBudget(limits);
  const held = new HeldFiles(ctx);
  ctx.progress.begin("push", ctx.store.pendingCount(ctx.acked.rev));
  try {
    for (;;) {
      const perPack = Math.max(1, Math.min(limits.maxEntries, ctx.packEntriesCap));
      const pending = held.ahead(perPack);
      if (pending === null) return;
      if (held.holdOversized(pending)) continue;
      const pack = takePack(pending, budget, entryItemBudget(limits));
      if (pack.length === 0) return;
      // A root deleted or replaced while earlier packs went out sends no more (store/root-identity.ts).
      ctx.checkRoot();
      let res: PushResponse;
      try {
        res = await sendPack(ctx, pack, budget);
      } catch (e) {
        if (e instanceof StaleFile) {
          held.changed(e.path);
          continue;
        }
        const acked = ackedOf(e);
        if (acked) {
          setAcked(ctx, acked);
          continue;
        }
        throw e;
      }
      recordPushed(ctx, pack, res);
      removeEmptiedDirs(ctx, pack);
      ctx.progress.advance("push", pack.length);
    }
  } finally {
    ctx.progress.end("push");
  }
}

async function sendPack(ctx: EngineContext, pack: PathRecord[], budget: number): Promise<PushResponse> {
  const { limits, capabilities } = ctx.server;
  // A file whose content is the one agreed with the server (an mtime-only change) sends no bytes.
  const refs = refsOf(pack.filter((r) => !signatureMatches(r.entry, r.agreed)));
  const entriesBytes = pack.reduce((n, r) => n + estimateEntryBytes(r), 0);
  const entries = pack.map((r): PushEntry => pushEntryOf(r.entry, r.serverRev));
  // The early upload's last answers say which of these the server now holds (context.ts).
  await ctx.uploadsLanding;
  const small =
    capabilities.includes("inline-objects") &&
    refs.length <= UNPROBED_MAX_CHUNKS &&
    refs.reduce((n, r) => n + r.size, 0) <= UNPROBED_MAX_BYTES;
  const probed = !small && mayHoldObjects(ctx);
  const missing = small ? refs : await probe(ctx, refs);
  const missingBytes = missing.reduce((n, m) => n + m.size + OBJECT_OVERHEAD, 0);
  const inline =
    capabilities.includes("inline-objects") &&
    missing.length <= limits.maxObjects &&
    entriesBytes + missingBytes <= budget;
  const objects = inline ? readObjects(ctx, missing) : [];
  if (!inline) await upload(ctx, missing, budget, probed);
  const request = {
    hostId: ctx.store.hostId,
    start: ctx.acked,
    end: { rev: (pack[pack.length - 1] as PathRecord).hostRev, path: null },
    entries,
    objects,
    ...pulledThrough(ctx),
  };
  let res: PushResponse;
  try {
    res = await ctx.call("push", request);
  } catch (e) {
    // Objects the server lacks although this host thought it held them: a
    // collection took them after the probe or this sync's own upload
    // (PROTOCOL.md §7.9), or a file's content was agreed with the workspace a
    // rebound directory synced before. The server names at most 1,024 of
    // them (§4.5 rule 5), so what this sync saw held is forgotten and the
    // pack's chunks are probed again; those the server names are uploaded
    // whatever the probe says. Once: the refused pack stored nothing, its
    // inline objects included, so the retry carries them again.
    const missing = missingOf(e);
    if (!missing) throw e;
    const named = new Set(missing.map(toHex));
    const inlined = new Set(objects.map((o) => toHex(o.hash)));
    const others = refsOf(pack).filter((m) => !inlined.has(m.hex));
    for (const m of others) ctx.heldChunks.delete(m.hex);
    const lacking = new Set((await probe(ctx, others)).map((m) => m.hex));
    await upload(
      ctx,
      others.filter((m) => named.has(m.hex) || lacking.has(m.hex)),
      budget,
      true,
    );
    res = await ctx.call("push", request);
  }
  // Counted once the server took the pack: a refused pack is sent again and counted then.
  ctx.report.entriesSent += pack.length;
  for (const r of pack) ctx.report.sent.push({ path: r.entry.path, kind: r.entry.kind });
  ledgerOf(ctx.report).sent(
    ctx.store,
    pack.map((r) => r.entry),
  );
  ctx.report.objectsSent += objects.length;
  ctx.report.objectBytesSent += objects.reduce((n, o) => n + o.bytes.byteLength, 0);
  return res;
}

/**
 * The server rev through which this host has every other host's changes:
 * its saved pull cursor in this epoch (a cursor inside a rev has not seen
 * all of it). The server refuses a delete of a directory that would take a
 * child written after it (PROTOCOL.md §4.5 rule 7), which the conflict loop
 * then pulls.
 */
function pulledThrough(ctx: EngineContext): { pulled: number; pulledId?: Uint8Array } {
  const pull = ctx.store.position().pull;
  if (!pull || !hashesEqual(pull.epoch, ctx.server.epoch)) return { pulled: 0 };
  if (pull.cursor.path !== null) return { pulled: wholeRevsThrough(pull.cursor) };
  // With its identity, the server refuses the pack if that rev is another history's (a restore; §4.5 rule 2a).
  return { pulled: pull.cursor.rev, ...(pull.revId ? { pulledId: pull.revId } : {}) };
}

/**
 * The pack is on the server: its paths are agreed at the pack's rev (a
 * re-acknowledged pack keeps the old base: its rev is not the pack's), gone
 * records are dropped, and `acked` moves. When this pack took its rev
 * (`committed`) and that rev directly follows the pull cursor, the cursor
 * moves past it too: it holds only this host's changes, which a pull would
 * skip anyway. A pack that wrote nothing answers the head rev, which may
 * hold another host's changes (soak seeds 84, 99); a server that does not
 * say `committed` leaves the cursor where it is (one more pull).
 */
function recordPushed(ctx: EngineContext, pack: PathRecord[], res: PushResponse): void {
  const store = ctx.store;
  const epoch = ctx.server.epoch;
  trace(
    () =>
      `pushed ${res.applied ? `rev ${res.rev}${res.committed === false ? " (nothing written)" : ""}` : "again"} pulled ${pulledThrough(ctx).pulled}: ` +
      pack.map((r) => `${r.entry.path} ${traceEntry(r.entry)} base ${r.serverRev}`).join(", "),
  );
  store.transaction(() => {
    // A pushed deletion stays as an acknowledged tombstone: a reconcile can
    // then tell "this host deleted it" from "this host never had it".
    for (const r of pack) store.markAgreed(r.entry.path, res.applied ? res.rev : r.serverRev, entrySignature(r.entry));
    setAcked(ctx, res.acked);
    const pull = store.position().pull;
    const cursor = pull && hashesEqual(pull.epoch, epoch) ? pull.cursor : null;
    // Only a cursor whose identity the server checked (pulledId) is known to be in the history `rev` follows.
    const atHead = cursor
      ? cursor.path === null && cursor.rev === res.rev - 1 && (cursor.rev === 0 || pull?.revId !== undefined)
      : res.rev === 1;
    if (res.committed === true && atHead) {
      store.setPull({ epoch, cursor: { rev: res.rev, path: null }, ...(res.revId ? { revId: res.revId } : {}) });
    }
  });
  ctx.report.serverRev = Math.max(ctx.report.serverRev, res.rev);
}

/**
 * The server took this host's deletions: a directory the pull made only to
 * hold a deleted path goes with it (emptied-dirs.ts). Other hosts remove it
 * when they pull the deletion; this host's own changes never come back to
 * it, and the directory, agreeing with the server as far as its record
 * says, stayed here alone (soak seed 65).
 */
function removeEmptiedDirs(ctx: EngineContext, pack: PathRecord[]): void {
  const view: EmptiedDirsView = {
    record: (path) => ctx.store.get(path),
    setRecord: (_path, record) => ctx.store.put(record),
    isPending: (hostRev) => ctx.isPending(hostRev),
    abs: (path) => join(ctx.root, path),
  };
  for (const r of pack) if (r.entry.kind === "gone") removeEmptiedParents(view, r.entry.path);
}

function setAcked(ctx: EngineContext, acked: Cursor): void {
  if (!cursorsEqual(ctx.acked, acked)) ctx.acked = acked;
  ctx.store.setAcked(acked);
}
