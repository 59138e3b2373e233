/**
 * The applier's removals: what the server deleted, and whatever stands
 * where the server's new state goes. A path goes only when its disk state
 * is the one agreed with the server; anything else on disk is local work,
 * kept (and pushed again) or moved to a conflict copy, never destroyed.
 * Every removal is checked again after the fact (replace-guard.ts), so a
 * write landing between the check and the unlink is kept too.
 */
import { type BigIntStats, linkSync, readdirSync, renameSync, rmdirSync, unlinkSync } from "node:fs";
import type { Change } from "../../protocol/changes.ts";
import type { Entry } from "../../protocol/entry.ts";
import { entrySignature } from "../common/entry-state.ts";
import { trace } from "../common/trace.ts";
import { mtimeMs, permBits, statKey } from "../scan/stat-key.ts";
import type { PathRecord } from "../store/store.ts";
import { type ApplyState, tombstone } from "./apply-state.ts";
import { conflictPath, lstatOrNull, sameDisk } from "./disk.ts";
import { removeEmptiedParents } from "./emptied-dirs.ts";
import { moveAside, releaseTemps, unchangedSince } from "./replace-guard.ts";

export class Remover {
  /** Directories the server deleted that stayed for unsynced files under them (removeLocal), by path. */
  private readonly keptDirs = new Map<string, { readonly change: Change; readonly hostRev: number }>();

  constructor(private readonly s: ApplyState) {}

  /**
   * The server says the path is gone: remove what is synced there; keep (and
   * re-push) what is not. `known` is what the decision saw at the path.
   */
  async removeLocal(c: Change, known?: BigIntStats | null): Promise<void> {
    const { s } = this;
    await s.ctx.applyHooks.beforeReplace?.(c.path);
    const ancestors = s.ancestorsOf(c.path);
    const st = ancestors.state === "ok" ? lstatOrNull(s.abs(c.path)) : null;
    if (known !== undefined && st && !st.isDirectory() && !sameDisk(known, st)) {
      // Changed since the decision to delete it: a local edit wins over the remote delete.
      trace(() => `kept ${c.path}: changed since the decision to remove it`);
      this.keepChanged(c);
      return;
    }
    if (st?.isDirectory() && !this.pruneDir(c.path, c.rev)) {
      // Unsynced files remain under it: the directory stays, and is pushed again.
      const record = s.record(c.path);
      const entry: Entry = { kind: "dir", path: c.path, mode: permBits(st), mtime: mtimeMs(st) };
      s.setRecord(c.path, {
        entry,
        sizes: [],
        stat: statKey(st),
        hostRev: s.ctx.store.reserveHostRevs(1),
        serverRev: c.rev,
        agreed: record?.agreed ?? null,
      });
      trace(() => `kept ${c.path}: unsynced paths under it`);
      s.stampUnder(c.path);
      this.keptDirs.set(c.path, { change: c, hostRev: (s.record(c.path) as PathRecord).hostRev });
      return;
    }
    if (st && !st.isDirectory() && !this.removeChecked(c.path, st)) {
      this.keepChanged(c);
      return;
    }
    trace(() => `removed ${c.path} ${st ? statKey(st) : "nothing"}`);
    s.setRecord(c.path, tombstone(c));
    if (st) this.removeEmptied(c.path);
  }

  /** `path` went (removed here, or found deleted here too): a directory made only to hold it goes with it (emptied-dirs.ts). */
  removeEmptied(path: string): void {
    if (removeEmptiedParents(this.s, path)) this.s.forgetDirs();
  }

  /**
   * At the end of a pull: a directory the server deleted that stayed for
   * files under it which later changes of the same pull removed (a
   * reconcile's stale files, or files whose fingerprint was not recorded yet)
   * is removed now that it is empty, rather than pushed back as an empty
   * directory. Deepest first, so a parent sees its emptied children gone.
   */
  settleKeptDirs(): void {
    const { s } = this;
    const paths = [...this.keptDirs.keys()].sort().reverse();
    for (const path of paths) {
      const kept = this.keptDirs.get(path) as { readonly change: Change; readonly hostRev: number };
      // Only the directory as removeLocal kept it: not one a later change (or scan) recorded since.
      if (s.record(path)?.hostRev !== kept.hostRev) continue;
      const st = lstatOrNull(s.abs(path));
      if (!st?.isDirectory() || readdirSync(s.abs(path)).length > 0) continue;
      rmdirSync(s.abs(path));
      trace(() => `removed ${path}: emptied`);
      s.setRecord(path, tombstone(kept.change));
    }
    this.keptDirs.clear();
    s.forgetDirs();
  }

  /**
   * Makes room at `path` for a new state: a synced file or symlink is
   * removed, a directory is pruned of what is synced, and whatever local
   * work remains is moved to a conflict copy.
   */
  clearPath(path: string): void {
    const { s } = this;
    s.forgetDirs();
    const st = lstatOrNull(s.abs(path));
    if (!st) return;
    if (st.isDirectory()) {
      // The server's path becomes a file or symlink: no live child of it stays on the server, however new.
      if (!this.pruneDir(path, Number.MAX_SAFE_INTEGER)) this.preserve(path);
      return;
    }
    const record = s.record(path);
    const synced = record && !s.ctx.isPending(record.hostRev) && record.stat !== null && record.stat === statKey(st);
    if (synced && this.removeChecked(path, st)) {
      trace(() => `removed ${path}: in the way`);
      s.setRecord(path, null);
    } else this.preserve(path);
  }

  /**
   * Settles the records under `path`, where nothing but perhaps a file or
   * symlink is on disk: the paths they name were deleted here, and no scan
   * has stamped that yet. A state the server removed with `path` (agreed at
   * `covered` or before) or never had from this host is forgotten; one it
   * still holds is a local deletion, pushed as such. Left as they were,
   * they would push stale states under a path the server deleted, where
   * other hosts would have to make a parent that nothing removes.
   */
  settleUnder(path: string, covered: number): void {
    const { s } = this;
    const store = s.ctx.store;
    if (store.under(path).length === 0) return;
    s.flush();
    store.transaction(() => {
      for (const r of store.under(path)) {
        if (r.entry.kind === "gone") continue;
        const neverPushed = r.serverRev === 0 && r.agreed === null;
        const forget = neverPushed || r.serverRev <= covered;
        trace(() => `settled ${r.entry.path} under ${path}: ${forget ? "forgotten" : "deleted here"}`);
        if (forget) store.remove(r.entry.path);
        else store.put(localDeletion(r, store.reserveHostRevs(1)));
      }
    });
  }

  /**
   * After a rename replaced `path`: `linked` is a second name of the file it
   * replaced (replace-guard.ts). Still the file the re-check passed (`checked`), it
   * goes; else a write landed between the re-check and the rename, and it
   * is kept as a conflict copy.
   */
  settleLinked(path: string, linked: string, checked: BigIntStats | null): void {
    if (unchangedSince(linked, checked)) {
      unlinkSync(linked);
      return;
    }
    trace(() => `kept ${path}: written between the re-check and the rename`);
    this.keepAsCopy(path, linked);
  }

  /** Moves the local state at `path` to a conflict copy and stamps the copy for push. */
  preserve(path: string): void {
    const { s } = this;
    s.forgetDirs();
    s.flush();
    const store = s.ctx.store;
    const copy = this.copyName(path);
    const movesChildren = lstatOrNull(s.abs(path))?.isDirectory() === true;
    trace(() => `preserved ${path} as ${copy}`);
    renameSync(s.abs(path), s.abs(copy));
    store.transaction(() => {
      // A directory took what was under it to the copy (stamped there below).
      // Local deletions under `path` still hold (a host that turned `dir` into
      // a file deleted `dir/x`) and stay pending, or the server would keep
      // `dir/x` and this host not.
      for (const r of store.under(path)) {
        if (r.entry.kind === "gone" ? !s.ctx.isPending(r.hostRev) : movesChildren) store.remove(r.entry.path);
      }
      store.remove(path);
    });
    // A file or symlink moved nothing from under it: what the store still
    // holds there (a watcher's scan still to come) this host deleted.
    if (!movesChildren) this.settleUnder(path, 0);
    s.ctx.report.conflicts.push({ path, copy });
    s.stampUnder(copy, true);
  }

  /** Records what is at `c.path` now as a local change based on `c`, pushed over the server's state. */
  private keepChanged(c: Change): void {
    const { s } = this;
    s.flush();
    const now = s.ctx.scanner.readState(c.path);
    if (!now) return;
    s.setRecord(c.path, {
      ...now,
      hostRev: s.ctx.store.reserveHostRevs(1),
      serverRev: c.rev,
      agreed: entrySignature(c),
    });
  }

  /**
   * Removes, depth first, every path under `dir` (and `dir`) whose disk state
   * is the one agreed with the server, at `rev` (the removing change's) or
   * before. Returns true when `dir` is gone; then records of paths under it
   * that were no longer on disk (deleted here, no scan stamped it yet) are
   * settled too, or a stale one would push its state under a directory the
   * server deleted, where other hosts would have to make a parent for it.
   */
  private pruneDir(dir: string, rev: number): boolean {
    if (!this.pruneTree(dir, rev)) return false;
    this.settleUnder(dir, rev);
    return true;
  }

  /** pruneDir's walk; `keepSelf`: `dir` stays whatever is removed under it (a directory this host wrote after `rev`). */
  private pruneTree(dir: string, rev: number, keepSelf = false): boolean {
    const { s } = this;
    s.forgetDirs();
    let empty = true;
    for (const name of readdirSync(s.abs(dir))) {
      const rel = `${dir}/${name}`;
      const st = lstatOrNull(s.abs(rel));
      if (!st) continue;
      const record = s.record(rel);
      // Agreed at a newer rev than the change removing `dir`: this host pushed it after that deletion (its own
      // write, which no pull echoes), and the server keeps it; so does the host.
      const kept = !!record && (s.ctx.isPending(record.hostRev) || record.serverRev > rev);
      if (st.isDirectory()) {
        if (!this.pruneTree(rel, rev, kept)) empty = false;
        continue;
      }
      const synced = record && !kept && record.stat !== null && record.stat === statKey(st);
      if (synced && this.removeChecked(rel, st)) {
        trace(() => `removed ${rel}: pruned at rev ${rev}`);
        s.setRecord(rel, null);
      } else empty = false;
    }
    if (!empty || keepSelf) return false;
    trace(() => `removed ${dir}: pruned at rev ${rev}`);
    rmdirSync(s.abs(dir));
    s.setRecord(dir, null);
    return true;
  }

  /**
   * Removes the file or symlink at `path`, which the caller's check saw as
   * `checked` (synced, or as the decision saw it). Moved aside first and
   * checked again (replace-guard.ts): one written in between is put back (or, when
   * something new took its place meanwhile, kept as a conflict copy), and
   * the answer is false.
   */
  private removeChecked(path: string, checked: BigIntStats): boolean {
    const { s } = this;
    s.ctx.applyHooks.atReplace?.(path);
    const aside = moveAside(s.abs(path));
    try {
      if (unchangedSince(aside, checked)) {
        unlinkSync(aside);
        return true;
      }
      trace(() => `kept ${path}: written between the check and the removal`);
      try {
        // A link, unlike a rename, never replaces what appeared at the path meanwhile.
        linkSync(aside, s.abs(path));
        unlinkSync(aside);
      } catch {
        this.keepAsCopy(path, aside);
      }
      return false;
    } finally {
      releaseTemps(aside);
    }
  }

  /** Moves a file that was at `path` (now at `from`) to a conflict copy of it and stamps the copy for push. */
  private keepAsCopy(path: string, from: string): void {
    const { s } = this;
    const copy = this.copyName(path);
    renameSync(from, s.abs(copy));
    s.ctx.report.conflicts.push({ path, copy });
    s.stampUnder(copy, true);
  }

  /** A free conflict copy name for `path` (disk.ts conflictPath), taken neither on disk nor in the store. */
  private copyName(path: string): string {
    const { s } = this;
    const store = s.ctx.store;
    return conflictPath(path, s.ctx.hostTag, new Date(), (p) => lstatOrNull(s.abs(p)) !== null || !!store.get(p));
  }
}

/** A path this host deleted, to push over the server state its record agreed with. */
function localDeletion(r: PathRecord, hostRev: number): PathRecord {
  return { ...r, entry: { kind: "gone", path: r.entry.path }, sizes: [], stat: null, hostRev };
}
