/**
 * The applier: carries one server change out on disk and in the store.
 * Files and symlinks are written to a temporary name in the target's
 * directory and renamed over it, so a path is always either its old or its
 * new state; mode and mtime are set before the rename. Paths are checked
 * from the root down with lstat (disk.ts), so nothing outside the root is
 * ever written. A local change the server's would overwrite is first kept
 * as a conflict copy (remove.ts, which also carries out deletions).
 *
 * Record writes go through the pull's overlay (apply-state.ts), committed
 * with the pull cursor.
 */
import {
  type BigIntStats,
  chmodSync,
  closeSync,
  lstatSync,
  mkdirSync,
  readlinkSync,
  renameSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
} from "node:fs";
import type { Change } from "../../protocol/changes.ts";
import type { Entry } from "../../protocol/entry.ts";
import { entrySignature, sameState, signatureMatches } from "../common/entry-state.ts";
import { trace, traceEntry } from "../common/trace.ts";
import { ruleFileDir } from "../scan/ignore-rules.ts";
import { mtimeMs, permBits, statKey, utimeSeconds } from "../scan/stat-key.ts";
import type { PathRecord } from "../store/store.ts";
import { ApplyState, tombstone } from "./apply-state.ts";
import type { EngineContext } from "./context.ts";
import { type Decision, decide, type MergeMode } from "./decide.ts";
import { DirModes } from "./dir-modes.ts";
import { checkServerEntry, lstatOrNull, RefusedPath, sameDisk } from "./disk.ts";
import type { ObjectFetcher } from "./fetch-objects.ts";
import { leftByPull } from "./ignored-left.ts";
import { checkRoom, refusalOf } from "./refusals.ts";
import { Remover } from "./remove.ts";
import { linkAside, placeIfEmpty, placeNew, releaseTemps, tempBeside } from "./replace-guard.ts";
import { placedFileKey, SAFE_MODE_MASK, writeFileTemp } from "./write-file.ts";

/** Directories one change may unlock (dir-modes.ts) before its EACCES stands. */
const MAX_UNLOCKS = 16;

export class Applier {
  private readonly s: ApplyState;
  private readonly remover: Remover;
  /** Directory modes set when the pull ends (finishDirs). */
  private readonly dirModes: DirModes;

  constructor(
    private readonly ctx: EngineContext,
    private readonly fetcher: ObjectFetcher,
  ) {
    this.s = new ApplyState(ctx);
    this.remover = new Remover(this.s);
    this.dirModes = new DirModes(ctx.root);
  }

  /** The record of a path, including writes not yet flushed. */
  record(path: string): PathRecord | undefined {
    return this.s.record(path);
  }

  /** Commits buffered record writes, and `also` (the pull cursor), in one transaction. */
  flush(also?: () => void): void {
    this.s.flush(also);
  }

  /**
   * When the pull ends, however it ends: sets the directories' deferred
   * modes (dir-modes.ts), and records them. A record keeping the
   * fingerprint of the mode the pull held a directory at while it wrote
   * (0700) would match a later chmod back to it, which no scan would then
   * send (issue 27 item 7). Records are flushed by then (pull.ts).
   */
  finishDirs(): void {
    const store = this.ctx.store;
    const set = this.dirModes.finish();
    if (set.length === 0) return;
    store.transaction(() => {
      for (const d of set) {
        const r = store.get(d.path);
        if (r && r.stat === d.before) store.put({ ...r, stat: d.after });
      }
    });
  }

  /** At the end of a pull: directories kept for unsynced files that the pull has since emptied go (remove.ts). */
  settleKeptDirs(): void {
    this.remover.settleKeptDirs();
  }

  /** True when applying `c` will likely need its bytes (the host does not already have that state). */
  mayNeedBytes(c: Change): boolean {
    if (c.kind !== "file") return false;
    const r = this.s.record(c.path);
    if (!r) return true;
    // The host agreed to this very state before: the disk has it, or a local change wins over it.
    if (r.agreed !== null && signatureMatches(c, r.agreed)) return false;
    return !(r.entry.kind === "file" && sameState(r.entry, c));
  }

  /**
   * Applies one change. A change this machine cannot hold is reported and
   * skipped (refusals.ts), and the caller keeps it for the next pull; a full
   * disk throws. Returns the decision taken. `signature`: `c`'s
   * (entrySignature), when the caller took it already (the pull journal).
   */
  async apply(c: Change, mode: MergeMode, signature?: Uint8Array): Promise<Decision | "refused" | "ignored"> {
    try {
      checkServerEntry(c);
      if (this.ctx.ignore.ignoresPathOrAncestor(c.path, c.kind === "dir")) {
        leftByPull(this.ctx);
        return "ignored";
      }
      const decision = await this.applyUnlocking(c, mode, signature ?? entrySignature(c));
      // A `.ferryignore` the pull wrote, replaced or removed rules the rest of this pull and the push after it.
      const rulesAt = ruleFileDir(c.path);
      if (rulesAt !== null) this.ctx.ignore.reload(rulesAt);
      return decision;
    } catch (e) {
      const refused = refusalOf(e, c.path);
      if (!refused) throw e;
      trace(() => `refused ${c.path} ${traceEntry(c)} rev ${c.rev}: ${refused.reason}`);
      this.ctx.report.refused.push({ path: refused.path, reason: refused.reason });
      return "refused";
    }
  }

  /** applyChecked, again after each EACCES that unlocking a directory of ours may cure (dir-modes.ts). */
  private async applyUnlocking(c: Change, mode: MergeMode, agreed: Uint8Array): Promise<Decision> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.applyChecked(c, mode, agreed);
      } catch (e) {
        const err = e as NodeJS.ErrnoException;
        if (err.code !== "EACCES" || !err.path || attempt >= MAX_UNLOCKS) throw e;
        const unlocked = this.dirModes.unlock(err.path);
        if (unlocked.length === 0) throw e;
        for (const u of unlocked) {
          const r = this.s.record(u.path);
          if (r && r.stat === u.before) this.s.setRecord(u.path, { ...r, stat: u.after });
        }
        this.s.forgetDirs();
      }
    }
  }

  private async applyChecked(c: Change, mode: MergeMode, agreed: Uint8Array): Promise<Decision> {
    const ancestors = this.s.ancestorsOf(c.path);
    if (ancestors.state !== "ok" && c.kind === "gone") {
      // Nothing can be there: the server tombstones a subtree when its root becomes a file or a symlink.
      // Agreed as a tombstone at its rev, not forgotten: a path made there again is pushed with that
      // base, which the server takes; with none (0) it refused it as a conflict no pull could resolve.
      trace(() => `apply ${c.path} gone rev ${c.rev} -> adopt: no directory at ${ancestors.at}`);
      this.s.setRecord(c.path, tombstone(c));
      return "adopt";
    }
    if (ancestors.state === "blocked") this.refuseUnderSyncedLink(c.path, ancestors);
    const record = this.s.record(c.path);
    // A path with no record under a directory this pull made is taken for empty without a look
    // (ApplyState.underMadeDir): what appeared there since the mkdir is found when the change is placed.
    const look = ancestors.state === "ok" && !(record === undefined && this.s.underMadeDir(c.path));
    const st = look ? lstatOrNull(this.s.abs(c.path)) : null;
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
      this.s.flush();
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
      this.remover.settleUnder(c.path, c.kind === "dir" ? 0 : c.rev);
    }
    // Before a conflict copy is made or a byte fetched: a file this disk has no room for.
    if ((decision === "apply" || decision === "conflict") && c.kind === "file")
      checkRoom(this.ctx.root, c.path, c.size);
    switch (decision) {
      case "metadata": {
        // Same bytes on disk: the server's mode and mtime set in place, nothing written or fetched.
        const abs = this.s.abs(c.path);
        // Re-checked as a replace is: a save since the decision is local work, left for the next scan.
        if (st === null || statKey(lstatSync(abs, { bigint: true })) !== key) return "keep-local";
        this.ctx.applyHooks.atReplace?.(c.path);
        if (c.kind === "file") {
          chmodSync(abs, c.mode & SAFE_MODE_MASK);
          const seconds = utimeSeconds(c.mtime);
          utimesSync(abs, seconds, seconds);
        }
        const { rev: _rev, ...entry } = c;
        const st2 = lstatSync(abs, { bigint: true });
        this.s.setRecord(c.path, {
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
        if (current === null) {
          this.s.setRecord(c.path, tombstone(c));
          // Deleted here as well, so no push of that deletion follows (soak seed 65).
          if (record) this.remover.removeEmptied(c.path);
        } else this.s.setRecord(c.path, { entry: current, sizes, stat, hostRev: 0, serverRev: c.rev, agreed });
        return decision;
      case "keep-local": {
        if (current === null) {
          this.s.setRecord(c.path, {
            entry: { kind: "gone", path: c.path },
            sizes: [],
            stat: null,
            hostRev: this.stamp(record, diskMatches),
            serverRev: c.rev,
            agreed,
          });
        } else {
          this.s.setRecord(c.path, {
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
        this.remover.preserve(c.path);
        // Nothing is there now: a save landing after the move is local work too, which the re-check keeps.
        await this.write(c, null, agreed);
        return decision;
      case "apply":
        // Nothing touched the path since `st` was read: write() need not lstat it again.
        await this.write(c, st, agreed);
        return decision;
    }
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
      await this.remover.removeLocal(c, known);
      return;
    }
    this.makeParents(c.path);
    const abs = this.s.abs(c.path);
    let st = known;
    let sizes: number[] = [];
    // A file's fingerprint is taken from its descriptor once placed (write-file.ts placedFileKey).
    let stat: string | null = null;
    if (c.kind === "dir") {
      const mode = c.mode & SAFE_MODE_MASK;
      if (st && !st.isDirectory()) {
        this.remover.clearPath(c.path);
        st = null;
      }
      const now = this.dirModes.modeNow(c.path, mode, c.mtime);
      // Made with its mode: chmod only when the umask took bits (below), as for a file (write-file.ts).
      // A directory made locally since the look is what the change asks for (makeDir).
      if (!st) {
        if (makeDir(abs, now)) this.s.noteMade(c.path);
      } else if (permBits(st) !== now) chmodSync(abs, now);
      this.ctx.applyHooks.afterPlace?.(c.path);
      // A file a local process put there since is local work: no fingerprint, so the next look reads it.
      let placed = lstatSync(abs, { bigint: true });
      if (!st && placed.isDirectory() && permBits(placed) !== now) {
        chmodSync(abs, now);
        placed = lstatSync(abs, { bigint: true });
      }
      // A mode a local process set since the chmod above is local work, not the server's: no fingerprint,
      // so the next scan reads it and pushes it. Kept, the fingerprint of that mode beside the server's
      // entry let every later scan trust the record, and the directory stayed apart (issue 27 item 7).
      stat = placed.isDirectory() && permBits(placed) === now ? statKey(placed) : null;
    } else {
      const temp = tempBeside(abs);
      // A second name for the file being replaced, until the rename has happened and been checked.
      let linked: string | null = null;
      /** The file the re-check saw and the rename replaced, for settleLinked. */
      let checked: BigIntStats | null = null;
      let renamed = false;
      /** The new file's descriptor, open until the file is placed and fingerprinted. */
      let fd: number | null = null;
      try {
        if (c.kind === "file") ({ sizes, fd } = await writeFileTemp(temp, c, this.fetcher));
        else symlinkSync(c.target, temp);
        await this.ctx.applyHooks.beforeReplace?.(c.path);
        const target = c.kind === "symlink" ? c.target : null;
        // A new file (nothing there at the decision): linked if nothing is there still, else re-checked
        // below. A symlink is re-checked first, as before: one that meets something there after the
        // re-check is refused, which the pull's deferrals rely on (recheck.test.ts, soak seed 22).
        if (st === null && c.kind === "file" && this.placeIfEmpty(c, temp, abs)) renamed = true;
        else {
          // The download took time: a local save meanwhile is kept as a conflict copy, never renamed over.
          const now = lstatOrNull(abs);
          if (now?.isDirectory() && st?.isDirectory()) this.remover.clearPath(c.path);
          else if (now && !sameDisk(st, now)) this.remover.preserve(c.path);
          else if (now?.isDirectory()) this.remover.clearPath(c.path);
          // Only what the re-check passed may go; anything else found there after the rename is local work.
          const replacing = now !== null && !now.isDirectory() && sameDisk(st, now);
          checked = replacing && now.isFile() ? now : null;
          linked = replacing ? linkAside(abs) : null;
          this.ctx.applyHooks.atReplace?.(c.path);
          trace(() => `renamed ${c.path} ${traceEntry(c)} over ${replacing ? statKey(now) : "nothing"}`);
          // Onto a path now empty, only if it still is: a file a local process put there since is kept.
          if (replacing) renameSync(temp, abs);
          else placeNew(temp, abs, target);
          renamed = true;
        }
        // At once: a local write after this is a change the next scan must see.
        if (fd !== null && c.kind === "file") stat = placedFileKey(fd, c);
        this.ctx.applyHooks.afterPlace?.(c.path);
        if (c.kind === "symlink") stat = placedLinkKey(abs, c.target);
        if (linked) this.remover.settleLinked(c.path, linked, checked);
      } catch (e) {
        try {
          unlinkSync(temp);
        } catch {
          // Already placed or never made: nothing of ours is left at the temp name.
        }
        // The rename failed: the file is still at its path, and its second name would stay in the tree.
        if (linked && !renamed) {
          try {
            unlinkSync(linked);
          } catch {
            // Gone already: the second name is what we wanted removed.
          }
        }
        throw e;
      } finally {
        if (fd !== null) closeSync(fd);
        // Left at a name only when its directory moved meanwhile: the next scan removes it (stale-temp.ts).
        releaseTemps(temp, linked);
      }
    }
    if (c.kind === "file") this.fetcher.remember(abs, c.chunks, sizes);
    const { rev: _rev, ...entry } = c;
    this.s.setRecord(c.path, {
      entry: entry as Entry,
      sizes,
      stat,
      hostRev: 0,
      serverRev: c.rev,
      agreed,
    });
  }

  /** placeIfEmpty (replace-guard.ts), with the hook and trace of a placement. */
  private placeIfEmpty(c: Change, temp: string, abs: string): boolean {
    this.ctx.applyHooks.atReplace?.(c.path);
    const placed = placeIfEmpty(temp, abs);
    if (placed) trace(() => `renamed ${c.path} ${traceEntry(c)} over nothing`);
    return placed;
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
      const ancestors = this.s.ancestorsOf(path);
      if (ancestors.state === "ok") return;
      if (ancestors.state === "blocked") {
        this.refuseUnderSyncedLink(path, ancestors);
        this.remover.clearPath(ancestors.at);
      } else {
        mkdirSync(this.s.abs(ancestors.at));
        this.s.noteMade(ancestors.at);
        trace(() => `made ${ancestors.at} for ${path}`);
        const st = lstatSync(this.s.abs(ancestors.at), { bigint: true });
        // Made for a child: recorded as not pending. What the host last agreed with the server about the
        // path still stands: forgotten, a later deletion of the directory was pushed with base 0, a
        // conflict that brought it back, or not pushed at all (settleUnder; soak seed 61).
        const agreed = this.s.record(ancestors.at);
        this.s.setRecord(ancestors.at, {
          entry: { kind: "dir", path: ancestors.at, mode: permBits(st), mtime: mtimeMs(st) },
          sizes: [],
          stat: statKey(st),
          hostRev: 0,
          serverRev: agreed?.serverRev ?? 0,
          agreed: agreed?.agreed ?? null,
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
    const st = lstatOrNull(this.s.abs(blocked.at));
    const record = this.s.record(blocked.at);
    if (st && record && !this.ctx.isPending(record.hostRev) && record.stat === statKey(st)) {
      throw new RefusedPath(path, `its ancestor '${blocked.at}' is a symlink`);
    }
  }
}

/** True when two entries have one signature: the same content and mode (client/common/entry-state.ts). */
function sameSignature(a: Entry, b: Entry): boolean {
  return signatureMatches(a, entrySignature(b));
}

/**
 * The fingerprint of the symlink the pull just put at `abs`, or null when
 * the path no longer holds it: a local process may have put something else
 * there since (soak seed 37), which a fingerprint taken blindly would pass
 * off as the server's state. Taken twice around the readlink, so what was
 * read and what is fingerprinted are one link.
 */
function placedLinkKey(abs: string, target: string): string | null {
  const before = lstatSync(abs, { bigint: true });
  if (!before.isSymbolicLink() || readlinkSync(abs) !== target) return null;
  const key = statKey(before);
  return statKey(lstatSync(abs, { bigint: true })) === key ? key : null;
}

/**
 * mkdir of a server directory where the decision saw nothing: true when
 * made; false when a directory is there now (a local `mkdir -p` since the
 * look, or, under a directory this pull made, since that mkdir: apply-state.ts
 * underMadeDir), which is the state the change asks for and no refusal. Anything
 * else there (a file) throws EEXIST: local work, refused and kept.
 */
function makeDir(abs: string, mode: number): boolean {
  try {
    mkdirSync(abs, mode);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST" && lstatOrNull(abs)?.isDirectory()) return false;
    throw e;
  }
}
