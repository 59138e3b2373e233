/**
 * Rev stamping: what a scan found becomes pending local changes in the
 * store, each with a host rev of its own.
 */

import { trace, traceEntry } from "../common/trace.ts";
import type { ScanResult } from "../scan/scanner.ts";
import type { HostStore } from "../store/store.ts";
import { leftByScan } from "./ignored-left.ts";
import { noteRemoved } from "./renames.ts";

/**
 * Records a scan in the store in one transaction (but for `unsettled`
 * paths): each change takes a new
 * host rev (one rev per path, so host cursors never need a path), keeping
 * the server rev and signature it last agreed on as the push `base`.
 * Returns the number of paths stamped.
 */
export function stampScan(store: HostStore, result: ScanResult, unsettled?: (path: string) => boolean): number {
  // A file still being written keeps its old record and fingerprint: the next look reads it again.
  const changes = unsettled ? result.changes.filter((c) => !unsettled(c.entry.path)) : result.changes;
  return store.transaction(() => {
    let rev = changes.length > 0 ? store.reserveHostRevs(changes.length) : 0;
    for (const c of changes) {
      const previous = store.get(c.entry.path);
      if (c.entry.kind === "gone") noteRemoved(store, c.entry.path, previous?.entry);
      trace(() => `stamped ${c.entry.path} ${traceEntry(c.entry)} h${rev} (was ${traceEntry(previous?.entry)})`);
      store.put({
        entry: c.entry,
        sizes: c.sizes,
        stat: c.stat,
        hostRev: rev++,
        serverRev: previous?.serverRev ?? 0,
        agreed: previous?.agreed ?? null,
      });
    }
    for (const r of result.refreshed) {
      const previous = store.get(r.path);
      if (previous) store.put({ ...previous, stat: r.stat });
    }
    for (const path of result.dropped) {
      trace(() => `dropped ${path}`);
      store.remove(path);
    }
    if (result.droppedUnder !== null) leftByScan(store, result.droppedUnder);
    return changes.length;
  });
}
