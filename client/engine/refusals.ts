/**
 * Which failures to write one server change skip that change, and which stop
 * the pull. A change this machine cannot hold (a name too long once joined
 * to the root, no permission, a name or target the file system refuses, a
 * path that moved while it was written) is refused: reported, kept in the
 * store for the next pull, and the rest of the pull applies. A failure of
 * the disk itself (full, read-only, I/O) would fail every change after it,
 * so it stops the pull with a clear error instead.
 */
import { statfsSync } from "node:fs";
import { RefusedPath } from "./disk.ts";

/** errno codes that concern one path: the change is refused, the pull goes on. */
const PER_PATH: Readonly<Record<string, string>> = {
  ENAMETOOLONG: "the name is too long for this file system (joined to this root)",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EILSEQ: "the file system cannot hold this name",
  EINVAL: "the file system cannot hold this name or target",
  ELOOP: "too many symlinks on the way",
  ENOTDIR: "an ancestor stopped being a directory while it was written",
  EISDIR: "a directory appeared where it was written",
  EEXIST: "something appeared where it was written",
  ENOTEMPTY: "a directory it replaces holds files",
  EBUSY: "the path is in use",
};

/** errno codes of a full disk: the pull stops with `disk_full`. */
const DISK_FULL = new Set(["ENOSPC", "EDQUOT"]);

/**
 * Room below which a disk counts as full. A file larger than the room left
 * is refused alone while at least this much is free: that file, not the
 * disk, is the problem (a read-write client names 60 GB by uploading one
 * chunk and listing it 60,000 times), and it must not stop every pull.
 */
export const FULL_BELOW_BYTES = 64 * 1024 * 1024;

/** The pull stopped because the disk is full; what was applied before stays applied and recorded. */
export class DiskFullError extends Error {
  readonly code = "disk_full";
  constructor(path: string, cause: unknown) {
    super(`no space left on the disk while writing '${path}': free some space and pull again`, { cause });
    this.name = "DiskFullError";
  }
}

/**
 * The refusal `e` means for the change at `path`, or null when `e` is not
 * about that path alone (the caller rethrows it). A full disk throws
 * DiskFullError.
 */
export function refusalOf(e: unknown, path: string): RefusedPath | null {
  if (e instanceof RefusedPath) return e;
  const code = (e as NodeJS.ErrnoException | null)?.code;
  if (typeof code !== "string") return null;
  if (DISK_FULL.has(code)) throw new DiskFullError(path, e);
  const reason = PER_PATH[code];
  return reason === undefined ? null : new RefusedPath(path, `${code}: ${reason}`);
}

/**
 * Before a file is written (apply.ts): a file larger than the room left on
 * the disk is refused, or, when the disk is full, stops the pull, before
 * any byte of it is fetched or written. Only files past FULL_BELOW_BYTES
 * are measured: a smaller one that does not fit finds the disk full anyway.
 */
export function checkRoom(root: string, path: string, size: number): void {
  if (size <= FULL_BELOW_BYTES) return;
  let free: number;
  try {
    const s = statfsSync(root);
    free = s.bavail * s.bsize;
  } catch {
    return; // not measurable here: the write finds out
  }
  if (size <= free) return;
  if (free < FULL_BELOW_BYTES) throw new DiskFullError(path, null);
  throw new RefusedPath(path, `ENOSPC: the file needs ${size} bytes and this disk has ${free} free`);
}
