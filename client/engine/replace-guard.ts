/**
 * The applier's last look before it replaces or removes a file. Its
 * re-check (an lstat) and the rename or unlink are two system calls: a
 * write landing between them (through a descriptor the writer opened
 * earlier, or while this process was descheduled, which under load takes
 * milliseconds) would be destroyed unseen. So the file is first given a
 * second name (a hard link for a replace, a rename aside for a removal);
 * once the replace or removal is done, that name still reaches what was
 * there, and its fingerprint says whether it is the file the re-check saw.
 */
import { type BigIntStats, linkSync, renameSync, symlinkSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { TEMP_PREFIX } from "../scan/ignore-rules.ts";
import { claimTemp, releaseTemp } from "../scan/stale-temp.ts";
import { sameFileAs } from "../scan/stat-key.ts";
import { lstatOrNull } from "./disk.ts";

/** Temporary names: unique in this process, and the pid keeps two processes apart. */
let tempCounter = 0;

/**
 * A temporary name beside `abs`, which the scanner skips, in use until
 * `releaseTemps` (then, or once its process is gone, the scanner removes
 * what is left at that name: scan/stale-temp.ts reads the pid back).
 */
export function tempBeside(abs: string): string {
  const name = `${TEMP_PREFIX}${process.pid}-${++tempCounter}`;
  claimTemp(name);
  return join(abs, "..", name);
}

/** The write or removal that made these names is over: what is left at one (its directory moved) is litter. */
export function releaseTemps(...names: readonly (string | null)[]): void {
  for (const name of names) if (name !== null) releaseTemp(name);
}

/**
 * A second name (hard link) for the regular file at `abs`, before a rename
 * replaces it; null when no file is there, or the file system has no hard
 * links (the replace is then as exact as the re-check).
 */
export function linkAside(abs: string): string | null {
  if (!lstatOrNull(abs)?.isFile()) return null;
  const linked = tempBeside(abs);
  try {
    linkSync(abs, linked);
    return linked;
  } catch {
    releaseTemps(linked);
    return null;
  }
}

/**
 * Puts the new file or symlink written at `temp` at `abs`, where nothing is
 * now: a hard link (for a symlink, the symlink itself, to `target`) is made
 * only if nothing is at `abs` by then, where a rename would replace a file a
 * local process put there since (a save by rename, a link: soak seed 35).
 * Then EEXIST, a refusal of this change: the next pull finds the local file
 * and keeps it. A file system without hard links gets the rename.
 */
export function placeNew(temp: string, abs: string, target: string | null): void {
  const failed = linkNew(temp, abs, target);
  if (!failed) return;
  if (!NO_HARD_LINKS.has(failed.code ?? "")) throw failed;
  renameSync(temp, abs);
}

/**
 * placeNew for a new file, where the applier's decision saw nothing at
 * `abs`, before any re-check: true once placed; false, with nothing done,
 * when something is at `abs` now (EEXIST) or the file system has no hard
 * links. The applier then re-checks and places as it would have: the lstat
 * before the link is only made when the link could not be (one system call
 * of a pulled new file saved, issue 13).
 */
export function placeIfEmpty(temp: string, abs: string): boolean {
  const failed = linkNew(temp, abs, null);
  if (!failed) return true;
  if (failed.code === "EEXIST" || NO_HARD_LINKS.has(failed.code ?? "")) return false;
  throw failed;
}

/** Links `temp` at `abs` (a symlink: makes it), then drops `temp`; returns the error when the link failed. */
function linkNew(temp: string, abs: string, target: string | null): NodeJS.ErrnoException | null {
  try {
    if (target === null) linkSync(temp, abs);
    else symlinkSync(target, abs);
  } catch (e) {
    return e as NodeJS.ErrnoException;
  }
  unlinkSync(temp);
  return null;
}

/** errno codes of a file system that cannot make this hard link. */
const NO_HARD_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "EMLINK", "ENOSYS"]);

/** Moves what is at `abs` to a temporary name beside it, to be checked before it is deleted. */
export function moveAside(abs: string): string {
  const aside = tempBeside(abs);
  try {
    renameSync(abs, aside);
  } catch (e) {
    releaseTemps(aside);
    throw e;
  }
  return aside;
}

/**
 * The file at `abs` is still the one `checked` saw: same size, mtime (ns),
 * inode and mode (stat-key.ts sameFileAs). Not ctime, which the link or
 * rename itself moves; a write moves mtime.
 */
export function unchangedSince(abs: string, checked: BigIntStats | null): boolean {
  const now = lstatOrNull(abs);
  return now !== null && checked !== null && sameFileAs(now, checked);
}
