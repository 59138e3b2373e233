/**
 * The applier: carries one server change out on disk and in the store.
 * Files and symlinks are written to a temporary name in the target's
 * directory and renamed over it, so a path is always either its old or its
 * new state; mode and mtime are set before the rename. Paths are checked
 * from the root down with lstat (disk.ts), so nothing outside the root is
 * ever written. A local change the server's would overwrite is first kept
 * as a conflict copy.
 *
 * Store writes are buffered in an overlay and committed with the pull
 * cursor (`flush`), one transaction per page. A crash in between leaves files
 * on disk that the store does not know yet; the next sync rescans them and
 * adopts them when the same page arrives again.
 */
import {
  type BigIntStats,
  chmodSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmdirSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
} from "node:fs";
import { join } from "node:path";
import type { Change } from "../../protocol/changes.ts";
import type { Entry } from "../../protocol/entry.ts";
import { entrySignature, sameState, signatureMatches } from "../entry-state.ts";
import { mtimeMs, permBits, statKey, utimeSeconds } from "../scan/stat-key.ts";
import type { PathRecord } from "../store/store.ts";
import { trace, traceEntry } from "../trace.ts";
import type { EngineContext } from "./context.ts";
import { type Decision, decide, type MergeMode } from "./decide.ts";
import { DirModes } from "./dir-modes.ts";
import {
  type Ancestors,
  checkServerEntry,
  conflictPath,
  inspectAncestors,
  type KnownDirs,
  lstatOrNull,
  RefusedPath,
  sameDisk,
} from "./disk.ts";
import type { ObjectFetcher } from "./fetch-objects.ts";
import { checkRoom, refusalOf } from "./refusals.ts";
import { linkAside, moveAside, tempBeside, unchangedSince } from "./replace-guard.ts";
import { stampScan } from "./stamp.ts";
import { SAFE_MODE_MASK, writeFileTemp } from "./write-file.ts";

/** Directories one change may unlock (dir-modes.ts) before its EACCES stands. */
const MAX_UNLOCKS = 16;

export class Applier {
  private readonly overlay = new Map<string, PathRecord | null>();
  private readonly knownDirs: KnownDirs = new Set();
  /** Directories the server deleted that stayed for unsynced files under them (removeLocal), by path. */
  private readonly keptDirs = new Map<string, { readonly change: Change; readonly hostRev: number }>();
  /** Directory modes set when the pull ends (pull.ts calls `finish`). */
  readonly dirModes: DirModes;

  constructor(
    private readonly ctx: EngineContext,
    private readonly fetcher: ObjectFetcher,
  ) {
    this.dirModes = new DirModes(ctx.root);
  }

  /** The record of a path, including writes not yet flushed. */
  record(path: string): PathRecord | undefined {
    const r = this.overlay.get(path);
    return r === null ? undefined : (r ?? this.ctx.store.get(path));
  }

  /** Commits buffered record writes, and `also` (the pull cursor), in one transaction. */
  flush(also?: () => void): void {
    if (this.overlay.size === 0 && !also) return;
    this.ctx.store.transaction(() => {
      for (const [path, r] of this.overlay) {
        if (r) this.ctx.store.put(r);
        else this.ctx.store.remove(path);
      }
      also?.();
    });
    this.overlay.clear();
  }

  /** True when applying `c` will likely need its bytes (the host does not already have that state). */
  mayNeedBytes(c: Change): boolean {
    if (c.kind !== "file") return false;
    const r = this.record(c.path);
    if (!r) return true;
    // The host agreed to this very state before: the disk has it, or a local change wins over it.
    if (r.agreed !== null && signatureMatches(c, r.agreed)) return false;
    return !(r.entry.kind === "file" && sameState(r.entry, c));
  }

  /**
   * Applies one change. A change this machine cannot hold is reported and
   * skipped (refusals.ts), and the caller keeps it for the next pull; a full
   * disk throws. Returns the decision taken.
   */
  async apply(c: Change, mode: MergeMode): Promise<Decision | "refused" | "ignored"> {
    try {
      checkServerEntry(c);
      if (this.ctx.ignore.ignoresPathOrAncestor(c.path, c.kind === "dir")) return "ignored";
      return await this.applyUnlocking(c, mode);
    } catch (e) {
      const refused = refusalOf(e, c.path);
      if (!refused) throw e;
      trace(() => `refused ${c.path} ${traceEntry(c)} rev ${c.rev}: ${refused.reason}`);
      this.ctx.report.refused.push({ path: refused.path, reason: refused.reason });
      return "refused";
    }
  }

  /** applyChecked, again after each EACCES that unlocking a directory of ours may cure (dir-modes.ts). */
  private async applyUnlocking(c: Change, mode: MergeMode): Promise<Decision> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.applyChecked(c, mode);
      } catch (e) {
        const err = e as NodeJS.ErrnoException;
        if (err.code !== "EACCES" || !err.path || attempt >= MAX_UNLOCKS) throw e;
        const unlocked = this.dirModes.unlock(err.path);
        if (unlocked.length === 0) throw e;
        for (const u of unlocked) {
          const r = this.record(u.path);
          if (r && r.stat === u.before) this.setRecord(u.path, { ...r, stat: u.after });
        }
        this.knownDirs.clear();
      }
    }
  }

  private async applyChecked(c: Change, mode: MergeMode): Promise<Decision> {
    const ancestors = this.ancestorsOf(c.path);
    if (ancestors.state !== "ok" && c.kind === "gone") {
      // Nothing can be there: the server tombstones a subtree when its root becomes a file or a symlink.
      // Agreed as a tombstone at its rev, not forgotten: a path made there again is pushed with that
      // base, which the server takes; with none (0) it refused it as a conflict no pull could resolve.
      trace(() => `apply ${c.path} gone rev ${c.rev} -> adopt: no directory at ${ancestors.at}`);
      this.setRecord(c.path, tombstone(c));
      return "adopt";
    }
    if (ancestors.state === "blocked") this.refuseUnderSyncedLink(c.path, ancestors);
    const record = this.record(c.path);
    const st = ancestors.state === "ok" ? lstatOrNull(this.abs(c.path)) : null;
    const key = st ? statKey(st) : null;
    const diskMatches =
      st === null ? !record || record.entry.kind === "gone" : !!record && record.stat !== null && record.stat === key;
    let current: Entry | null;
    let changed: boolean;
    let sizes: readonly number[] = record?.sizes ?? [];
    // The fingerprint to keep for what is on disk (null: read it again next scan).
    let stat: string | null = key;
    if (diskMatches) {
      current = record && record.entry.kind !== "gone" ? record.entry : null;
      changed = !!record && this.ctx.isPending(record.hostRev);
    } else {
      // The disk moved since the store last saw it: read what is there now.
      this.flush();
      const now = st ? this.ctx.scanner.readState(c.path) : null;
      current = now?.entry ?? null;
      sizes = now?.sizes ?? [];
      stat = now?.stat ?? null;
      const sameAsRecord = !!record && !!now && record.entry.kind !== "gone" && sameSignature(record.entry, now.entry);
      changed = sameAsRecord ? this.ctx.isPending(record.hostRev) : true;
    }
    const local = { current, changed, agreed: record?.agreed ?? null };
    // A reconcile's changes carry the server's earlier states (decide.ts).
    const decision = decide(
      c,
      c.past ? { ...local, past: c.past, known: !!record && record.agreed !== null } : local,
      mode,
    );
    const agreed = entrySignature(c);
    trace(
      () =>
        `apply ${c.path} ${traceEntry(c)} rev ${c.rev} -> ${decision}: here ${traceEntry(current)} changed ${changed} ` +
        `record ${traceEntry(record?.entry)} h${record?.hostRev} s${record?.serverRev} diskMatches ${diskMatches}` +
        (c.past ? ` past [${c.past.map(traceEntry).join(" ")}]` : ""),
    );
    // Nothing, or a file or symlink, is at the path: records under it (a directory there before, deleted
    // here and not scanned since) name paths this disk no longer has.
    const mayHaveUnder = !record || record.entry.kind === "dir" || record.entry.kind === "gone";
    if ((decision === "adopt" || decision === "keep-local") && current?.kind !== "dir" && mayHaveUnder) {
      this.settleUnder(c.path, c.kind === "dir" ? 0 : c.rev);
    }
    // Before a conflict copy is made or a byte fetched: a file this disk has no room for.
    if ((decision === "apply" || decision === "conflict") && c.kind === "file")
      checkRoom(this.ctx.root, c.path, c.size);
    switch (decision) {
      case "metadata": {
        // Same bytes on disk: the server's mode and mtime set in place, nothing written or fetched.
        const abs = this.abs(c.path);
        // Re-checked as a replace is: a save since the decision is local work, left for the next scan.
        if (st === null || statKey(lstatSync(abs, { bigint: true })) !== key) return "keep-local";
        this.ctx.atReplace?.(c.path);
        if (c.kind === "file") {
          chmodSync(abs, c.mode & SAFE_MODE_MASK);
          utimesSync(abs, utimeSeconds(c.mtime), utimeSeconds(c.mtime));
        }
        const { rev: _rev, ...entry } = c;
        const st2 = lstatSync(abs, { bigint: true });
        this.setRecord(c.path, {
          entry: entry as Entry,
          sizes,
          // A save landing between the re-check and utimes would take the server's mtime and pass
          // for the server's bytes: a file keeps no fingerprint, so the next scan reads it again.
          stat: c.kind === "file" ? null : statKey(st2),
          hostRev: 0,
          serverRev: c.rev,
          agreed,
        });
        return decision;
      }
      case "adopt":
        if (current === null) this.setRecord(c.path, tombstone(c));
        else this.setRecord(c.path, { entry: current, sizes, stat, hostRev: 0, serverRev: c.rev, agreed });
        return decision;
      case "keep-local": {
        if (current === null) {
          this.setRecord(c.path, {
            entry: { kind: "gone", path: c.path },
            sizes: [],
            stat: null,
            hostRev: this.stamp(record, diskMatches),
            serverRev: c.rev,
            agreed,
          });
        } else {
          this.setRecord(c.path, {
            entry: current,
            sizes,
            stat,
            hostRev: this.stamp(record, diskMatches),
            serverRev: c.rev,
            agreed,
          });
        }
        return decision;
      }
      case "conflict":
        this.preserve(c.path);
        // Nothing is there now: a save landing after the move is local work too, which the re-check keeps.
        await this.write(c, null, agreed);
        return decision;
      case "apply":
        // Nothing touched the path since `st` was read: write() need not lstat it again.
        await this.write(c, st, agreed);
        return decision;
    }
  }

  /**
   * What `path`'s ancestors are on disk (disk.ts). Each directory found
   * corrects a stale pending record of it (restampStaleDir), wherever the
   * applier looks: deciding, making parents, removing.
   */
  private ancestorsOf(path: string): Ancestors {
    return inspectAncestors(this.ctx.root, path, this.knownDirs, (dir, st) => this.restampStaleDir(dir, st));
  }

  /**
   * `dir` is a directory on disk. A pending record saying otherwise (a
   * symlink, a file, a deletion) was stamped before a local process made the
   * directory again, and no scan has seen it since. Pushed as it stands, it
   * would take the whole subtree off the server, with the server's consent
   * (this host has pulled it), this pull's own writes under it included, and
   * the host's records would call them synced. It is stamped again as the
   * directory the disk holds, as the next scan would, with the same base.
   */
  private restampStaleDir(dir: string, st: BigIntStats): void {
    const r = this.record(dir);
    if (!r || r.entry.kind === "dir" || !this.ctx.isPending(r.hostRev)) return;
    const entry: Entry = { kind: "dir", path: dir, mode: permBits(st), mtime: mtimeMs(st) };
    trace(() => `restamped ${dir} dir (was ${traceEntry(r.entry)}): a directory is there now`);
    this.setRecord(dir, { ...r, entry, sizes: [], stat: statKey(st) });
  }

  /** The host rev for a path the local side keeps: its own when already pending, else a new one. */
  private stamp(record: PathRecord | undefined, diskMatches: boolean): number {
    if (record && diskMatches && this.ctx.isPending(record.hostRev)) return record.hostRev;
    return this.ctx.store.reserveHostRevs(1);
  }

  /**
   * Writes the server's state at its path and records it as agreed. `known`
   * is what the decision saw at the path (null: nothing there): the re-check
   * before the rename compares with it, never with a later lstat, which
   * would take a save made meanwhile for the state the decision saw.
   * `agreed` is `c`'s signature, which the caller already took.
   */
  private async write(c: Change, known: ReturnType<typeof lstatOrNull>, agreed: Uint8Array): Promise<void> {
    if (c.kind === "gone") {
      await this.removeLocal(c, known);
      return;
    }
    this.makeParents(c.path);
    const abs = this.abs(c.path);
    let st = known;
    let sizes: number[] = [];
    // A file's fingerprint is taken from its descriptor before the rename, which keeps all of it.
    let stat: string | null = null;
    if (c.kind === "dir") {
      const mode = c.mode & SAFE_MODE_MASK;
      if (st && !st.isDirectory()) {
        this.clearPath(c.path);
        st = null;
      }
      const now = this.dirModes.modeNow(c.path, mode, c.mtime);
      if (!st) mkdirSync(abs);
      if (!st || permBits(st) !== now) chmodSync(abs, now);
    } else {
      const temp = tempBeside(abs);
      // A second name for the file being replaced, until the rename has happened and been checked.
      let linked: string | null = null;
      let renamed = false;
      try {
        if (c.kind === "file") ({ sizes, stat } = await writeFileTemp(temp, c, this.fetcher));
        else symlinkSync(c.target, temp);
        await this.ctx.beforeReplace?.(c.path);
        // The download took time: a local save meanwhile is kept as a conflict copy, never renamed over.
        const now = lstatOrNull(abs);
        if (now?.isDirectory() && st?.isDirectory()) this.clearPath(c.path);
        else if (now && !sameDisk(st, now)) this.preserve(c.path);
        else if (now?.isDirectory()) this.clearPath(c.path);
        // Only the file the re-check passed may go; anything else found there after the rename is local work.
        const checked = now?.isFile() && sameDisk(st, now) ? now : null;
        this.ctx.atReplace?.(c.path);
        linked = linkAside(abs);
        trace(() => `renamed ${c.path} ${traceEntry(c)} over ${now ? statKey(now) : "nothing"}`);
        renameSync(temp, abs);
        renamed = true;
        if (linked) this.settleLinked(c.path, linked, checked);
      } catch (e) {
        try {
          unlinkSync(temp);
        } catch {}
        // The rename failed: the file is still at its path, and its second name would stay in the tree.
        if (linked && !renamed) {
          try {
            unlinkSync(linked);
          } catch {}
        }
        throw e;
      }
    }
    stat ??= statKey(lstatSync(abs, { bigint: true }));
    if (c.kind === "file") this.fetcher.remember(c.path, c.chunks, sizes);
    const { rev: _rev, ...entry } = c;
    this.setRecord(c.path, {
      entry: entry as Entry,
      sizes,
      stat,
      hostRev: 0,
      serverRev: c.rev,
      agreed,
    });
  }

  /**
   * Creates missing parent directories. A file or symlink in the way is
   * replaced, kept as a conflict copy when it is a local change (a host that
   * turned `dir` into a symlink while another host edited `dir/x` keeps both,
   * and its pending records under `dir` go with the copy, so its next push is
   * not refused again).
   */
  private makeParents(path: string): void {
    for (;;) {
      const ancestors = this.ancestorsOf(path);
      if (ancestors.state === "ok") return;
      if (ancestors.state === "blocked") {
        this.refuseUnderSyncedLink(path, ancestors);
        this.clearPath(ancestors.at);
      } else {
        mkdirSync(this.abs(ancestors.at));
        trace(() => `made ${ancestors.at} for ${path}`);
        const st = lstatSync(this.abs(ancestors.at), { bigint: true });
        // Made for a child: recorded as local and agreed-unknown, not pending.
        this.setRecord(ancestors.at, {
          entry: { kind: "dir", path: ancestors.at, mode: permBits(st), mtime: mtimeMs(st) },
          sizes: [],
          stat: statKey(st),
          hostRev: 0,
          serverRev: 0,
          agreed: null,
        });
      }
    }
  }

  /**
   * A symlink ancestor the server itself holds (synced, unchanged here) with
   * entries under it is a server that contradicts itself: refused, never
   * written through nor replaced. A symlink that is a local change is not
   * refused: the server's entries win the path and the link is kept as a copy.
   */
  private refuseUnderSyncedLink(path: string, blocked: { readonly at: string; readonly symlink: boolean }): void {
    if (!blocked.symlink) return;
    const st = lstatOrNull(this.abs(blocked.at));
    const record = this.record(blocked.at);
    if (st && record && !this.ctx.isPending(record.hostRev) && record.stat === statKey(st)) {
      throw new RefusedPath(path, `its ancestor '${blocked.at}' is a symlink`);
    }
  }

  /** The server says the path is gone: remove what is synced there; keep (and re-push) what is not. */
  private async removeLocal(c: Change, known?: ReturnType<typeof lstatOrNull>): Promise<void> {
    await this.ctx.beforeReplace?.(c.path);
    const ancestors = this.ancestorsOf(c.path);
    const st = ancestors.state === "ok" ? lstatOrNull(this.abs(c.path)) : null;
    if (known !== undefined && st && !st.isDirectory() && !sameDisk(known, st)) {
      // Changed since the decision to delete it: a local edit wins over the remote delete.
      trace(() => `kept ${c.path}: changed since the decision to remove it`);
      this.keepChanged(c);
      return;
    }
    if (st?.isDirectory() && !this.pruneDir(c.path, c.rev)) {
      // Unsynced files remain under it: the directory stays, and is pushed again.
      const record = this.record(c.path);
      const entry: Entry = { kind: "dir", path: c.path, mode: permBits(st), mtime: mtimeMs(st) };
      this.setRecord(c.path, {
        entry,
        sizes: [],
        stat: statKey(st),
        hostRev: this.ctx.store.reserveHostRevs(1),
        serverRev: c.rev,
        agreed: record?.agreed ?? null,
      });
      trace(() => `kept ${c.path}: unsynced paths under it`);
      this.stampUnder(c.path);
      this.keptDirs.set(c.path, { change: c, hostRev: (this.record(c.path) as PathRecord).hostRev });
      return;
    }
    if (st && !st.isDirectory() && !this.removeChecked(c.path, st)) {
      this.keepChanged(c);
      return;
    }
    trace(() => `removed ${c.path} ${st ? statKey(st) : "nothing"}`);
    this.setRecord(c.path, tombstone(c));
  }

  /**
   * At the end of a pull: a directory the server deleted that stayed for
   * files under it which later changes of the same pull removed (a
   * reconcile's stale files, or files whose fingerprint was not recorded yet)
   * is removed now that it is empty, rather than pushed back as an empty
   * directory. Deepest first, so a parent sees its emptied children gone.
   */
  settleKeptDirs(): void {
    const paths = [...this.keptDirs.keys()].sort().reverse();
    for (const path of paths) {
      const kept = this.keptDirs.get(path) as { readonly change: Change; readonly hostRev: number };
      // Only the directory as removeLocal kept it: not one a later change (or scan) recorded since.
      if (this.record(path)?.hostRev !== kept.hostRev) continue;
      const st = lstatOrNull(this.abs(path));
      if (!st?.isDirectory() || readdirSync(this.abs(path)).length > 0) continue;
      rmdirSync(this.abs(path));
      trace(() => `removed ${path}: emptied`);
      this.setRecord(path, tombstone(kept.change));
    }
    this.keptDirs.clear();
    this.knownDirs.clear();
  }

  /** Records what is at `c.path` now as a local change based on `c`, pushed over the server's state. */
  private keepChanged(c: Change): void {
    this.flush();
    const now = this.ctx.scanner.readState(c.path);
    if (!now) return;
    this.setRecord(c.path, {
      ...now,
      hostRev: this.ctx.store.reserveHostRevs(1),
      serverRev: c.rev,
      agreed: entrySignature(c),
    });
  }

  /**
   * Makes room at `path` for a new state: a synced file or symlink is
   * removed, a directory is pruned of what is synced, and whatever local
   * work remains is moved to a conflict copy.
   */
  private clearPath(path: string): void {
    this.knownDirs.clear();
    const st = lstatOrNull(this.abs(path));
    if (!st) return;
    if (st.isDirectory()) {
      // The server's path becomes a file or symlink: no live child of it stays on the server, however new.
      if (!this.pruneDir(path, Number.MAX_SAFE_INTEGER)) this.preserve(path);
      return;
    }
    const record = this.record(path);
    const synced = record && !this.ctx.isPending(record.hostRev) && record.stat !== null && record.stat === statKey(st);
    if (synced && this.removeChecked(path, st)) {
      trace(() => `removed ${path}: in the way`);
      this.setRecord(path, null);
    } else this.preserve(path);
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

  /**
   * Settles the records under `path`, where nothing but perhaps a file or
   * symlink is on disk: the paths they name were deleted here, and no scan
   * has stamped that yet. A state the server removed with `path` (agreed at
   * `covered` or before) or never had from this host is forgotten; one it
   * still holds is a local deletion, pushed as such. Left as they were,
   * they would push stale states under a path the server deleted, where
   * other hosts would have to make a parent that nothing removes.
   */
  private settleUnder(path: string, covered: number): void {
    const store = this.ctx.store;
    if (store.under(path).length === 0) return;
    this.flush();
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

  /** pruneDir's walk; `keepSelf`: `dir` stays whatever is removed under it (a directory this host wrote after `rev`). */
  private pruneTree(dir: string, rev: number, keepSelf = false): boolean {
    this.knownDirs.clear();
    let empty = true;
    for (const name of readdirSync(this.abs(dir))) {
      const rel = `${dir}/${name}`;
      const st = lstatOrNull(this.abs(rel));
      if (!st) continue;
      const record = this.record(rel);
      // Agreed at a newer rev than the change removing `dir`: this host pushed it after that deletion (its own
      // write, which no pull echoes), and the server keeps it; so does the host.
      const kept = !!record && (this.ctx.isPending(record.hostRev) || record.serverRev > rev);
      if (st.isDirectory()) {
        if (!this.pruneTree(rel, rev, kept)) empty = false;
        continue;
      }
      const synced = record && !kept && record.stat !== null && record.stat === statKey(st);
      if (synced && this.removeChecked(rel, st)) {
        trace(() => `removed ${rel}: pruned at rev ${rev}`);
        this.setRecord(rel, null);
      } else empty = false;
    }
    if (!empty || keepSelf) return false;
    trace(() => `removed ${dir}: pruned at rev ${rev}`);
    rmdirSync(this.abs(dir));
    this.setRecord(dir, null);
    return true;
  }

  /**
   * After a rename replaced `path`: `linked` is a second name of the file it
   * replaced (replace-guard.ts). Still the file the re-check passed (`checked`), it
   * goes; else a write landed between the re-check and the rename, and it
   * is kept as a conflict copy.
   */
  private settleLinked(path: string, linked: string, checked: BigIntStats | null): void {
    if (unchangedSince(linked, checked)) {
      unlinkSync(linked);
      return;
    }
    trace(() => `kept ${path}: written between the re-check and the rename`);
    this.keepAsCopy(path, linked);
  }

  /**
   * Removes the file or symlink at `path`, which the caller's check saw as
   * `checked` (synced, or as the decision saw it). Moved aside first and
   * checked again (replace-guard.ts): one written in between is put back (or, when
   * something new took its place meanwhile, kept as a conflict copy), and
   * the answer is false.
   */
  private removeChecked(path: string, checked: BigIntStats): boolean {
    this.ctx.atReplace?.(path);
    const aside = moveAside(this.abs(path));
    if (unchangedSince(aside, checked)) {
      unlinkSync(aside);
      return true;
    }
    trace(() => `kept ${path}: written between the check and the removal`);
    try {
      // A link, unlike a rename, never replaces what appeared at the path meanwhile.
      linkSync(aside, this.abs(path));
      unlinkSync(aside);
    } catch {
      this.keepAsCopy(path, aside);
    }
    return false;
  }

  /** Moves a file that was at `path` (now at `from`) to a conflict copy of it and stamps the copy for push. */
  private keepAsCopy(path: string, from: string): void {
    const copy = this.copyName(path);
    renameSync(from, this.abs(copy));
    this.ctx.report.conflicts.push({ path, copy });
    this.stampUnder(copy, true);
  }

  /** A free conflict copy name for `path` (disk.ts conflictPath), taken neither on disk nor in the store. */
  private copyName(path: string): string {
    const store = this.ctx.store;
    return conflictPath(path, this.ctx.hostTag, new Date(), (p) => lstatOrNull(this.abs(p)) !== null || !!store.get(p));
  }

  /** Moves the local state at `path` to a conflict copy and stamps the copy for push. */
  private preserve(path: string): void {
    this.knownDirs.clear();
    this.flush();
    const store = this.ctx.store;
    const copy = this.copyName(path);
    const movesChildren = lstatOrNull(this.abs(path))?.isDirectory() === true;
    trace(() => `preserved ${path} as ${copy}`);
    renameSync(this.abs(path), this.abs(copy));
    store.transaction(() => {
      // A directory took what was under it to the copy (stamped there below).
      // Local deletions under `path` still hold (a host that turned `dir` into
      // a file deleted `dir/x`) and stay pending, or the server would keep
      // `dir/x` and this host not.
      for (const r of store.under(path)) {
        if (r.entry.kind === "gone" ? !this.ctx.isPending(r.hostRev) : movesChildren) store.remove(r.entry.path);
      }
      store.remove(path);
    });
    // A file or symlink moved nothing from under it: what the store still
    // holds there (a watcher's scan still to come) this host deleted.
    if (!movesChildren) this.settleUnder(path, 0);
    this.ctx.report.conflicts.push({ path, copy });
    this.stampUnder(copy, true);
  }

  /** Scans `path` (and under it) and stamps what the store does not know yet. */
  private stampUnder(path: string, includeSelf = false): void {
    this.flush();
    const result = this.ctx.scanner.scan(path);
    if (!includeSelf) {
      const i = result.changes.findIndex((s) => s.entry.path === path);
      if (i >= 0) result.changes.splice(i, 1);
    }
    stampScan(this.ctx.store, result);
  }

  private setRecord(path: string, record: PathRecord | null): void {
    this.overlay.set(path, record);
  }

  private abs(path: string): string {
    return join(this.ctx.root, path);
  }
}

/**
 * The record of a path the server deleted and this host agreed to: kept
 * (not forgotten) so a reconcile can tell "deleted here" from "never here".
 */
function tombstone(c: Change): PathRecord {
  const entry: Entry = { kind: "gone", path: c.path };
  return { entry, sizes: [], stat: null, hostRev: 0, serverRev: c.rev, agreed: entrySignature(entry) };
}

/** A path this host deleted, to push over the server state its record agreed with. */
function localDeletion(r: PathRecord, hostRev: number): PathRecord {
  return { ...r, entry: { kind: "gone", path: r.entry.path }, sizes: [], stat: null, hostRev };
}

/** True when two entries have one signature: the same content and mode (client/entry-state.ts). */
function sameSignature(a: Entry, b: Entry): boolean {
  return signatureMatches(a, entrySignature(b));
}
