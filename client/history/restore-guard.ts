/**
 * What a restore (restore-tree.ts) may replace or remove: only a path whose
 * state on disk is the one the server holds, so that it stays in the
 * history. Anything else there (an edit made since the push that came first,
 * a file the push skipped, an ignored file, which no history holds) is moved
 * aside as a conflict copy and reported, never destroyed: the restore is a
 * local change like any other, and keeps local work as a pull does
 * (engine/remove.ts).
 *
 * "Held" is the store's word for it: the path has a record, not a deletion,
 * pushed (its host rev acknowledged), and what is on disk now is that
 * record's state: its fingerprint, or, where the fingerprint is not trusted
 * (a file saved within a second of the push's look has none) or has moved,
 * the same bytes and mode, or the same symlink target, read again. The
 * restore pushes first, so every synced path is held unless it changed since.
 */
import { type BigIntStats, lstatSync, readdirSync, readlinkSync, renameSync, rmSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { hashesEqual } from "../../protocol/hash.ts";
import { chunkFile } from "../content/file-chunks.ts";
import { conflictPath, lstatOrNull } from "../engine/disk.ts";
import { linkAside, moveAside, releaseTemps, unchangedSince } from "../engine/replace-guard.ts";
import { statKey } from "../scan/stat-key.ts";
import type { HostStore, PathRecord } from "../store/store.ts";

/** A path the restore found with local work and moved aside instead of replacing. */
export interface KeptCopy {
  readonly path: string;
  readonly copy: string;
}

export class RestoreGuard {
  readonly kept: KeptCopy[] = [];
  private readonly ackedRev: number;

  constructor(
    private readonly root: string,
    private readonly store: HostStore,
    /** Names this host's conflict copies (engine/context.ts hostTag). */
    private readonly hostTag: string,
  ) {
    this.ackedRev = store.position().acked.rev;
  }

  /**
   * Puts `place` (which renames the restored file or symlink over `path`)
   * where `st` is a file or symlink now: the one there goes to a copy unless
   * the server holds it, and a write landing between the check and the
   * rename is caught by the second name the file keeps (replace-guard.ts).
   */
  replaceFile(path: string, st: BigIntStats, place: () => void): void {
    const abs = join(this.root, path);
    if (!this.held(path, st)) {
      this.keepAside(path, abs);
      place();
      return;
    }
    const linked = st.isFile() ? linkAside(abs) : null;
    place();
    if (linked === null) return;
    if (unchangedSince(linked, st)) unlinkSync(linked);
    else this.keepAside(path, linked);
    releaseTemps(linked);
  }

  /** Removes the file or symlink at `path` (a directory goes there): to a copy unless the server holds it. */
  removeFile(path: string, st: BigIntStats): void {
    const abs = join(this.root, path);
    if (this.held(path, st)) rmSync(abs, { force: true });
    else this.keepAside(path, abs);
  }

  /**
   * Removes the directory at `path` (a file or symlink goes there). It is
   * first moved aside whole, so nothing lands in it while it is looked
   * through; then it goes only if the server holds everything in it, and
   * otherwise stays, whole, as the directory's conflict copy.
   */
  removeDir(path: string): void {
    const abs = join(this.root, path);
    const aside = moveAside(abs);
    try {
      if (this.heldTree(path, aside)) rmSync(aside, { recursive: true, force: true });
      else this.keepAside(path, aside);
    } catch (e) {
      // Whatever is left under the temporary name would be swept as litter (scan/stale-temp.ts): put it back.
      if (lstatOrNull(aside) !== null) renameSync(aside, abs);
      throw e;
    } finally {
      releaseTemps(aside);
    }
  }

  /** `abs`: where the path is now (under a directory moved aside whole, not at `path`). */
  private held(path: string, st: BigIntStats, abs = join(this.root, path)): boolean {
    const record = this.store.get(path);
    if (record === undefined || record.entry.kind === "gone" || record.hostRev > this.ackedRev) return false;
    // A directory's fingerprint moves with its children: its own state is its kind, its children are checked apart.
    if (st.isDirectory()) return record.entry.kind === "dir";
    if (record.stat !== null && record.stat === statKey(st)) return true;
    return sameContent(abs, st, record);
  }

  /** Everything under `dir` (the directory `path`, now at `abs`) is held. */
  private heldTree(path: string, abs: string): boolean {
    if (!this.held(path, lstatSync(abs, { bigint: true }), abs)) return false;
    for (const name of readdirSync(abs)) {
      const child = `${path}/${name}`;
      const childAbs = join(abs, name);
      const st = lstatSync(childAbs, { bigint: true });
      if (st.isDirectory() ? !this.heldTree(child, childAbs) : !this.held(child, st, childAbs)) return false;
    }
    return true;
  }

  /** Moves what is at `from` (what was at `path`) to a conflict copy beside `path`. */
  private keepAside(path: string, from: string): void {
    const taken = (p: string) => lstatOrNull(join(this.root, p)) !== null || this.store.get(p) !== undefined;
    const copy = conflictPath(path, this.hostTag, new Date(), taken);
    renameSync(from, join(this.root, copy));
    this.kept.push({ path, copy });
  }
}

/**
 * The file or symlink at `abs` (stat `st`) is the state `record` holds, read
 * again: a file's mode, size and chunks, a symlink's target. For a path whose
 * fingerprint the store does not trust, such as a file the watch pushed
 * within a second of its save: the restore right after must not take it for
 * unpushed work and keep a copy of what the server holds.
 */
function sameContent(abs: string, st: BigIntStats, record: PathRecord): boolean {
  const entry = record.entry;
  if (st.isSymbolicLink()) return entry.kind === "symlink" && readlinkSync(abs) === entry.target;
  if (!st.isFile() || entry.kind !== "file") return false;
  if (Number(st.mode & 0o7777n) !== entry.mode || Number(st.size) !== entry.size) return false;
  const now = chunkFile(abs);
  return (
    now.chunks.length === entry.chunks.length &&
    now.chunks.every((h, i) => hashesEqual(h, entry.chunks[i] as Uint8Array))
  );
}
