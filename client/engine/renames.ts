/**
 * Renames, for output only: a path removed and a path added with the same
 * content (a file's bytes and mode, a symlink's target) are told as one
 * rename. The wire and the store know none (an entry says what a path is,
 * PROTOCOL.md §2): a rename there is a tombstone and a new path, and this
 * only pairs them for what a person reads (`status`, `--dry-run`, a
 * sync's lines; print-renames.ts tells a folder of them once).
 *
 * A stamped deletion keeps no content in the store, so stampScan notes
 * what a removed path held (`noteRemoved`), in this process's memory, for
 * the push that sends the tombstone to pair it.
 */
import type { Entry, EntryKind } from "../../protocol/entry.ts";
import { toHex } from "../../protocol/hash.ts";
import type { HostStore } from "../store/store.ts";
import type { SyncReport } from "./report.ts";

/** One path moved with its content unchanged. */
export interface Rename {
  readonly from: string;
  readonly to: string;
  readonly kind: EntryKind;
}

/** What each removed path held, by store, until its tombstone is sent (or the process ends). */
const removedContent = new WeakMap<HostStore, Map<string, Entry>>();

/** stampScan: `path` is stamped removed; it held `previous`. */
export function noteRemoved(store: HostStore, path: string, previous: Entry | undefined): void {
  if (!previous || contentKey(previous) === null) return;
  const held = removedContent.get(store) ?? new Map<string, Entry>();
  removedContent.set(store, held);
  held.set(path, previous);
}

/** What `path` held before it was removed: the store's record, or once stamped, what stampScan noted. */
export function removedEntry(store: HostStore, path: string): Entry | undefined {
  const here = store.get(path)?.entry;
  return here && here.kind !== "gone" ? here : removedContent.get(store)?.get(path);
}

/** A file's bytes and mode, a symlink's target; null for what has no content (a directory, a deletion). */
export function contentKey(e: Entry): string | null {
  if (e.kind === "file") return `f${e.mode.toString(8)}:${e.size}:${e.chunks.map(toHex).join("")}`;
  if (e.kind === "symlink") return `l:${e.target}`;
  return null;
}

/**
 * Pairs removed and added paths by content, one to one: a removed path
 * goes first to an added one with its name, then to the first added one.
 */
export function pairRenames(removed: ReadonlyMap<string, Entry>, added: ReadonlyMap<string, Entry>): Rename[] {
  const byKey = new Map<string, string[]>();
  for (const [path, e] of added) {
    const key = contentKey(e);
    if (key === null) continue;
    const paths = byKey.get(key) ?? [];
    paths.push(path);
    byKey.set(key, paths);
  }
  const renames: Rename[] = [];
  for (const [from, e] of removed) {
    const candidates = byKey.get(contentKey(e) ?? "");
    if (!candidates || candidates.length === 0) continue;
    const named = candidates.findIndex((to) => baseName(to) === baseName(from));
    const [to] = candidates.splice(named === -1 ? 0 : named, 1) as [string];
    renames.push({ from, to, kind: e.kind });
  }
  return renames.sort((a, b) => (a.from < b.from ? -1 : 1));
}

/** The renames among what a look found to push and to pull (status.ts). */
export function statusRenames(
  store: HostStore,
  look: {
    readonly local: ReadonlyMap<string, Entry>;
    readonly server: ReadonlyMap<string, Entry>;
    readonly pushes: readonly { readonly path: string }[];
    readonly pulls: readonly { readonly path: string }[];
  },
): { toPush: Rename[]; toPull: Rename[] } {
  const side = (
    paths: readonly { readonly path: string }[],
    entries: ReadonlyMap<string, Entry>,
    was: (p: string) => Entry | undefined,
  ) => {
    const removed = new Map<string, Entry>();
    const added = new Map<string, Entry>();
    for (const { path } of paths) {
      const e = entries.get(path);
      if (e === undefined) continue;
      const before = e.kind === "gone" ? was(path) : undefined;
      if (e.kind !== "gone") added.set(path, e);
      else if (before) removed.set(path, before);
    }
    return pairRenames(removed, added);
  };
  return {
    toPush: side(look.pushes, look.local, (p) => removedEntry(store, p)),
    // A deletion from the server removes what this host holds there.
    toPull: side(look.pulls, look.server, (p) => store.get(p)?.entry),
  };
}

/**
 * A sync's renames, gathered as its changes go: what each side removed
 * (with what it held) and added, paired when the report is read.
 */
export class RenameLedger {
  private readonly removed = { sent: new Map<string, Entry>(), received: new Map<string, Entry>() };
  private readonly added = { sent: new Map<string, Entry>(), received: new Map<string, Entry>() };

  /** Entries the server took from this host: tombstones are paired with what stampScan noted they held. */
  sent(store: HostStore, entries: readonly Entry[]): void {
    const held = removedContent.get(store);
    for (const e of entries) {
      if (e.kind !== "gone") this.added.sent.set(e.path, e);
      const was = held?.get(e.path);
      if (was === undefined) continue;
      held?.delete(e.path);
      if (e.kind === "gone") this.removed.sent.set(e.path, was);
    }
  }

  /** Server entries about to be applied: a tombstone is paired with what this host holds there. */
  received(store: HostStore, entries: readonly Entry[]): void {
    for (const e of entries) {
      if (e.kind !== "gone") this.added.received.set(e.path, e);
      else {
        const here = store.get(e.path)?.entry;
        if (here && contentKey(here) !== null) this.removed.received.set(e.path, here);
      }
    }
  }

  renames(): SyncReport["renamed"] {
    return {
      sent: pairRenames(this.removed.sent, this.added.sent),
      received: pairRenames(this.removed.received, this.added.received),
    };
  }
}

/** The report's ledger, made when first needed (the report is a plain object, JSON as it is). */
const ledgers = new WeakMap<SyncReport, RenameLedger>();

export function ledgerOf(report: SyncReport): RenameLedger {
  const ledger = ledgers.get(report) ?? new RenameLedger();
  ledgers.set(report, ledger);
  return ledger;
}

function baseName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}
