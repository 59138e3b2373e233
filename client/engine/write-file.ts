/**
 * Writing a pulled file's bytes: to a new temporary file (the applier
 * renames it over the path after its re-check), chunk by chunk as the
 * fetcher brings them, a large file's next windows asked for while this one
 * is written. The descriptor stays open until the file is placed, so its
 * fingerprint is taken after the link or rename that placed it, which moves
 * its ctime (placedFileKey).
 *
 * A new file of a pull costs seven system calls, each for a reason: open
 * of a new temporary name (`wx`: never another's file), write, futimes (the
 * server's mtime, exact), link to the path (replace-guard.ts placeIfEmpty:
 * it fails if anything is there now, where a rename would replace a file a
 * local process made meanwhile), unlink of the temporary, fstat of the
 * still-open descriptor (the fingerprint, ctime included, as placed), close;
 * fchmod only where the umask took bits. Writing at the path itself (open
 * `wx` there: two directory operations fewer) was weighed and refused: a
 * reader, or a process killed mid-file, would see a partial file under its
 * real name, which the next sync would take for local work and push
 * (pull-journal.ts leaves a state other than the journaled one to the scan;
 * pull-kill.test.ts); and a local process opening the path while it is
 * written would write into the pull's file, its bytes then lost under the
 * server's, where the temporary keeps the two apart and the link's EEXIST
 * keeps the local file as a conflict copy (pull-race.test.ts). Node has no
 * renameat2 (RENAME_NOREPLACE), which would do in one call what link and
 * unlink do in two, nor a way to link an O_TMPFILE file (linkat with
 * AT_SYMLINK_FOLLOW).
 */
import { closeSync, fchmodSync, fstatSync, futimesSync, openSync, writevSync } from "node:fs";
import type { Change } from "../../protocol/changes.ts";
import { permBits, statKey, utimeSeconds } from "../scan/stat-key.ts";
import { RefusedPath } from "./disk.ts";
import { type ObjectFetcher, type ObjectParts, wantedChunks } from "./fetch-objects.ts";

/** Chunks fetched at a time while writing one large file. */
const WRITE_WINDOW = 16;
/**
 * Windows asked for ahead of the one being written: as many as `objects/get`
 * may have in flight (fetch-objects.ts). With one ahead, the host waited for
 * each window while the object waited for the next ask, for every large
 * file (issue 13: most of a byte-heavy tree's bytes).
 */
const WINDOWS_AHEAD = 3;
/** setuid and setgid bits are never applied from the server: a host may run as root. */
export const SAFE_MODE_MASK = 0o1777;
/**
 * The bits a temporary file is created with, at most: only its owner may
 * write it while it is being written (as with the 0o600 it was created with
 * before), and nobody may read more of it than the finished file allows.
 */
const CREATE_MODE_MASK = 0o755;

/**
 * Per mode a pulled file asks for: whether `open` creates it with exactly
 * those bits under this process's umask. Learned from the first such file's
 * fstat; every placed file's fstat checks it again (placedFileKey).
 */
const OPENS_EXACT = new Map<number, boolean>();

/**
 * Writes a file's bytes, mode and mtime to a new temporary file; returns its
 * chunk lengths and its descriptor, still open: the caller places the file,
 * takes its fingerprint with placedFileKey, then closes it. Closed here when
 * the write fails.
 */
export async function writeFileTemp(
  temp: string,
  c: Change & { kind: "file" },
  fetcher: ObjectFetcher,
): Promise<{ sizes: number[]; fd: number }> {
  const mode = c.mode & SAFE_MODE_MASK;
  // Created with its final bits where the umask lets open give them (0o644 and 0o755 under the usual
  // 022): the fchmod after the write is then not made, one system call of about ten for each file of
  // a pull (issue 13). OPENS_EXACT says which modes open gives.
  const fd = openSync(temp, "wx", mode & CREATE_MODE_MASK);
  const sizes: number[] = [];
  try {
    let written = 0;
    for (let i = 0; i < c.chunks.length; i++) {
      const hash = c.chunks[i] as Uint8Array;
      if (i % WRITE_WINDOW === 0) {
        // A large file: the next windows are asked for now (at the first window all of them, then
        // the last), so they arrive while this one is written.
        for (let w = i === 0 ? 1 : WINDOWS_AHEAD; w <= WINDOWS_AHEAD; w++) {
          const from = i + w * WRITE_WINDOW;
          if (from >= c.chunks.length) break;
          const ahead = fetcher.load(wantedChunks(c, from, from + WRITE_WINDOW));
          ahead.catch(() => {}); // only a head start: a chunk it failed to bring is asked for again below
        }
      }
      let bytes = fetcher.take(hash);
      if (!bytes) {
        // Not prefetched (a large file's later chunks, or a chunk an earlier file took).
        await fetcher.load(wantedChunks(c, i, i + WRITE_WINDOW));
        const taken = fetcher.take(hash);
        if (taken === undefined) throw fetcher.lostRefusal(hash, c.path) ?? new Error(`chunk of ${c.path} not loaded`);
        bytes = taken;
      }
      writeParts(fd, bytes);
      // A chunk the file repeats (a sparse file is one chunk of zeros over and over) is read back from here.
      fetcher.noteWritten(hash, temp, written, bytes.byteLength);
      written += bytes.byteLength;
      sizes.push(bytes.byteLength);
    }
    if (written !== c.size) {
      // The server refuses such a file (PROTOCOL.md §4.5 rule 6); one from an older server is skipped, not fatal.
      throw new RefusedPath(c.path, `its chunks hold ${written} bytes, the entry says ${c.size}`);
    }
    const seconds = utimeSeconds(c.mtime);
    futimesSync(fd, seconds, seconds);
    let exact = OPENS_EXACT.get(mode);
    if (exact === undefined) {
      exact = permBits(fstatSync(fd, { bigint: true })) === mode;
      OPENS_EXACT.set(mode, exact);
    }
    // The umask took bits, or the mode is one a temporary file is not created with (group- or
    // other-writable, sticky): set now that the bytes are in. A chmod moves no mtime.
    if (!exact) fchmodSync(fd, mode);
    return { sizes, fd };
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

/**
 * The fingerprint of the file written by writeFileTemp on `fd`, taken once
 * it is placed: the link and unlink (or rename) that placed it moved its
 * ctime, and a fingerprint taken before them would make the next scan read
 * every pulled file again (pull-exact.test.ts). Null ("read it again") when
 * the file no longer looks as written: a size other than the entry's, or an
 * mtime as new as its ctime, which a local write between the placement and
 * this fstat leaves (the pull set an older mtime; a file whose server mtime
 * is that recent is only read once more).
 */
export function placedFileKey(fd: number, c: Change & { kind: "file" }): string | null {
  const mode = c.mode & SAFE_MODE_MASK;
  let st = fstatSync(fd, { bigint: true });
  if (permBits(st) !== mode) {
    // The umask changed since OPENS_EXACT learned it (process.umask in this process): the mode is set now.
    OPENS_EXACT.delete(mode);
    fchmodSync(fd, mode);
    st = fstatSync(fd, { bigint: true });
  }
  return st.size === BigInt(c.size) && st.mtimeNs < st.ctimeNs ? statKey(st) : null;
}

/** Writes every part, in one writev unless the kernel takes less (then the rest, again). */
function writeParts(fd: number, bytes: ObjectParts): void {
  let parts = bytes.parts;
  let left = bytes.byteLength;
  while (left > 0) {
    let n = writevSync(fd, parts);
    left -= n;
    if (left === 0) return;
    // A short write: drop what was written, cut into the first part not written whole.
    let i = 0;
    while (n >= (parts[i] as Uint8Array).byteLength) n -= (parts[i++] as Uint8Array).byteLength;
    parts = [(parts[i] as Uint8Array).subarray(n), ...parts.slice(i + 1)];
  }
}
