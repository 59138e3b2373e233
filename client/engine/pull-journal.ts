/**
 * The pull journal: before a page of changes touches the disk, the server
 * state each of its paths is about to get is written to the store; the
 * page's records and cursor clear it in one transaction (pull.ts). A pull
 * killed in between (the process, or the host) leaves files on disk that the
 * store never recorded; taken for new local work, a rerun would push them
 * back, undoing another host's deletion of them meanwhile.
 *
 * `recoverInterruptedPull` runs at the start of every sync and before a
 * watcher stamps paths: a journaled path whose disk state is the one the
 * pull was writing is recorded as agreed at that rev, exactly as if the page
 * had been flushed; anything else is left for the scan to judge.
 */
import { join } from "node:path";
import type { Change } from "../../protocol/changes.ts";
import { hashesEqual } from "../../protocol/hash.ts";
import { entrySignature } from "../common/entry-state.ts";
import type { Scanner } from "../scan/scanner.ts";
import { statKey } from "../scan/stat-key.ts";
import type { HostStore, PullIntent } from "../store/store.ts";
import { lstatOrNull } from "./disk.ts";

/** Journals a page before it is applied (pull.ts); returns each entry's signature, which the applier records. */
export function journalPage(store: HostStore, entries: readonly Change[]): Uint8Array[] {
  const signatures = entries.map(entrySignature);
  store.journalPull(
    entries.map((c, i): PullIntent => ({ path: c.path, rev: c.rev, signature: signatures[i] as Uint8Array })),
  );
  return signatures;
}

/** Records what an interrupted pull wrote; returns how many paths it recorded. */
export function recoverInterruptedPull(root: string, store: HostStore, scanner: Scanner): number {
  const journal = store.pullJournal();
  if (journal.length === 0) return 0;
  let recovered = 0;
  store.transaction(() => {
    for (const intent of journal) {
      const record = store.get(intent.path);
      if (record && record.hostRev === 0 && record.agreed && hashesEqual(record.agreed, intent.signature)) continue;
      const before = lstatOrNull(join(root, intent.path));
      const now = scanner.readState(intent.path);
      if (now === null) {
        // The pull removed it (a record that was a pending local change is never removed by a pull).
        // The signature of a deletion, made here rather than when the module loads: hashing loads node:crypto,
        // which a sync that reads and pulls nothing never needs (BENCHMARKS.md section 14).
        if (record && hashesEqual(intent.signature, entrySignature({ kind: "gone", path: "" }))) {
          store.remove(intent.path);
          recovered++;
        }
        continue;
      }
      if (!hashesEqual(entrySignature(now.entry), intent.signature)) continue;
      // The fingerprint of the state just read, as the applier would have kept it (the scanner leaves
      // a recently modified file's unset, but a pulled file's mtime is the server's, often recent).
      const after = lstatOrNull(join(root, intent.path));
      const same = before && after && statKey(before) === statKey(after);
      const stat = now.stat ?? (same ? statKey(after) : null);
      store.put({ ...now, stat, hostRev: 0, serverRev: intent.rev, agreed: intent.signature });
      recovered++;
    }
    store.clearPullJournal();
  });
  return recovered;
}
