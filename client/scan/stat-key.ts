/**
 * Stat fingerprints: what the scanner compares to decide a path is unchanged
 * without reading it. Files: size, mtime in ns, inode, mode and ctime in ns;
 * symlinks: size, mtime, inode and ctime; directories: only their permission
 * bits (a directory's mtime moves with every child, and its children are
 * scanned on their own).
 *
 * The ctime, as in git: a same-size rewrite in place whose mtime is then set
 * back (`cp -p`, `rsync -a`, `touch -r`, an archive's 1-second times) keeps
 * size, mtime, inode and mode, and was never sent, then overwritten by a
 * pull without a conflict copy. Every write, chmod, utimes, link or rename
 * moves the ctime to now, and nothing sets it back. A symlink keeps its
 * ctime too: a link removed and made again at the same path, with a target
 * of the same length, may get the freed inode back and its mtime set back
 * (`touch -h -r`). The cost: a chmod there and back, or a hard link added,
 * makes the next scan read the file once (found unchanged, nothing sent),
 * and the applier must take a placed file's fingerprint after the link or
 * rename that placed it (engine/write-file.ts).
 */
import { type BigIntStats, constants } from "node:fs";

export type DiskKind = "file" | "dir" | "symlink";

const { S_IFMT, S_IFREG, S_IFDIR, S_IFLNK } = constants;

/**
 * From the mode as a number: BigIntStats' isFile() and its kin make two
 * BigInts a call, and the scanner asks for every path it walks.
 */
export function diskKind(st: BigIntStats): DiskKind | null {
  switch (Number(st.mode) & S_IFMT) {
    case S_IFREG:
      return "file";
    case S_IFDIR:
      return "dir";
    case S_IFLNK:
      return "symlink";
    default:
      return null; // sockets, fifos, devices: never synced
  }
}

export function statKey(st: BigIntStats): string | null {
  switch (diskKind(st)) {
    case "file":
      return `f${st.size}:${st.mtimeNs}:${st.ino}:${st.mode}:${st.ctimeNs}`;
    case "symlink":
      return `l${st.size}:${st.mtimeNs}:${st.ino}:${st.ctimeNs}`;
    case "dir":
      return `d${st.mode & 0o7777n}`;
    default:
      return null;
  }
}

/** Permission bits of a stat, as the wire carries them. */
export function permBits(st: BigIntStats): number {
  return Number(st.mode & 0o7777n);
}

/** The mtime in whole milliseconds, floored (BigInt division truncates, which rounds negative times up). */
export function mtimeMs(st: BigIntStats): number {
  const ns = st.mtimeNs;
  const ms = ns / 1_000_000n;
  return Number(ns < 0n && ns % 1_000_000n !== 0n ? ms - 1n : ms);
}

/**
 * Seconds to hand `utimes` so that the time reads back as exactly `ms`
 * through mtimeMs: the middle of that millisecond. `ms / 1000` as a double
 * can land a few hundred nanoseconds below it, and came back 1 ms early.
 * A time before 1970 (which PROTOCOL.md §3 allows) as a numeric string:
 * Node reads a negative number as "now", and a numeric string as it is.
 * Any other as the number itself, which Node takes as it is: the string it
 * would parse back to the same double cost a conversion each way for every
 * file a pull writes (issue 13).
 */
export function utimeSeconds(ms: number): number | string {
  const seconds = (ms + 0.5) / 1000;
  return seconds < 0 ? String(seconds) : seconds;
}

/**
 * The same file as `checked` saw: size, mtime (ns), inode and mode, the
 * fingerprint but for the ctime, which the applier's own second name for it
 * (a link or rename aside: engine/replace-guard.ts) moves. A write moves the
 * mtime; a write given its mtime back within this check's window (a few
 * system calls) is the one thing it misses.
 */
export function sameFileAs(now: BigIntStats, checked: BigIntStats): boolean {
  return (
    now.size === checked.size && now.mtimeNs === checked.mtimeNs && now.ino === checked.ino && now.mode === checked.mode
  );
}

/**
 * A file modified within this window before we read it may change again
 * with the same mtime and ctime (filesystem clocks are coarse: the kernel
 * stamps ctime from a clock that moves once a tick): its fingerprint is not
 * trusted and the next scan reads it again ("racily clean", as in git).
 * Either time counts: the ctime is when the file last changed however its
 * mtime was set, and on a file system whose ctime says nothing the mtime
 * still does.
 */
const RACY_WINDOW_NS = 1_000_000_000n;

export function isRacy(st: BigIntStats, readAtMs: number): boolean {
  const readAt = BigInt(readAtMs) * 1_000_000n;
  return readAt - st.ctimeNs < RACY_WINDOW_NS || readAt - st.mtimeNs < RACY_WINDOW_NS;
}
