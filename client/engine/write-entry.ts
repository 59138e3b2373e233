/**
 * The applier's writing step (apply.ts): puts the server's state of a
 * directory, file or symlink at its path and records it as agreed. Files and
 * symlinks are written to a temporary name in the target's directory and
 * renamed over it, so a path is always either its old or its new state; mode
 * and mtime are set before the rename. What is in the way goes first
 * (remove.ts: a local change kept as a conflict copy, the rest cleared).
 * Deletions are the remover's, not this.
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
} from "node:fs";
import type { Change } from "../../protocol/changes.ts";
import type { Entry } from "../../protocol/entry.ts";
import { trace, traceEntry } from "../common/trace.ts";
import { mtimeMs, permBits, statKey } from "../scan/stat-key.ts";
import { refuseUnderSyncedLink } from "./apply-decide.ts";
import type { ApplyState } from "./apply-state.ts";
import type { EngineContext } from "./context.ts";
import type { DirModes } from "./dir-modes.ts";
import { lstatOrNull, sameDisk } from "./disk.ts";
import type { ObjectFetcher } from "./fetch-objects.ts";
import type { Remover } from "./remove.ts";
import { linkAside, placeIfEmpty, placeNew, releaseTemps, tempBeside } from "./replace-guard.ts";
import { placedFileKey, SAFE_MODE_MASK, writeFileTemp } from "./write-file.ts";

/** A change that puts something at its path. */
export type Placing = Exclude<Change, { readonly kind: "gone" }>;

export class EntryWriter {
  constructor(
    private readonly ctx: EngineContext,
    private readonly s: ApplyState,
    private readonly remover: Remover,
    private readonly dirModes: DirModes,
    private readonly fetcher: ObjectFetcher,
  ) {}

  /**
   * Writes the server's state at its path and records it as agreed. `known`
   * is what the decision saw at the path (null: nothing there): the re-check
   * before the rename compares with it, never with a later lstat, which
   * would take a save made meanwhile for the state the decision saw.
   * `agreed` is `c`'s signature, which the caller already took.
   */
  async write(c: Placing, known: BigIntStats | null, agreed: Uint8Array): Promise<void> {
    this.makeParents(c.path);
    const abs = this.s.abs(c.path);
    let sizes: number[] = [];
    // A file's fingerprint is taken from its descriptor once placed (write-file.ts placedFileKey).
    let stat: string | null;
    if (c.kind === "dir") stat = this.placeDir(c, abs, known);
    else ({ sizes, stat } = await this.placeFileOrLink(c, abs, known));
    if (c.kind === "file") this.fetcher.remember(abs, c.chunks, sizes);
    const { rev: _rev, ...entry } = c;
    this.s.setRecord(c.path, { entry: entry as Entry, sizes, stat, hostRev: 0, serverRev: c.rev, agreed });
  }

  /** Makes the directory, or sets its mode; the fingerprint to keep for it. */
  private placeDir(c: Placing & { readonly kind: "dir" }, abs: string, known: BigIntStats | null): string | null {
    let st = known;
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
    return placed.isDirectory() && permBits(placed) === now ? statKey(placed) : null;
  }

  /** Writes a file or symlink beside its path and renames it over; its chunk sizes and fingerprint. */
  private async placeFileOrLink(
    c: Exclude<Placing, { readonly kind: "dir" }>,
    abs: string,
    st: BigIntStats | null,
  ): Promise<{ sizes: number[]; stat: string | null }> {
    let sizes: number[] = [];
    let stat: string | null = null;
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
    return { sizes, stat };
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
        refuseUnderSyncedLink(this.s, this.ctx, path, ancestors);
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
