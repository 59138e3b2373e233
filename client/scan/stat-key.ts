/**
 * Stat fingerprints: what the scanner compares to decide a path is unchanged
 * without reading it. Files: size, mtime in ns, inode and mode; symlinks:
 * size, mtime and inode; directories: only their permission bits (a
 * directory's mtime moves with every child, and its children are scanned
 * on their own).
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
      return `f${st.size}:${st.mtimeNs}:${st.ino}:${st.mode}`;
    case "symlink":
      return `l${st.size}:${st.mtimeNs}:${st.ino}`;
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
 * As a numeric string: Node reads a negative number (before 1970, which
 * PROTOCOL.md §3 allows) as "now", and a numeric string as it is.
 */
export function utimeSeconds(ms: number): string {
  return String((ms + 0.5) / 1000);
}

/**
 * A file modified within this window before we read it may change again
 * with the same mtime (filesystem clocks are coarse): its fingerprint is not
 * trusted and the next scan reads it again ("racily clean", as in git).
 */
const RACY_WINDOW_NS = 1_000_000_000n;

export function isRacy(st: BigIntStats, readAtMs: number): boolean {
  return BigInt(readAtMs) * 1_000_000n - st.mtimeNs < RACY_WINDOW_NS;
}
