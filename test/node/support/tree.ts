/** Writing and reading trees for assertions: a snapshot is every synced path's kind, mode and content. */
import { createHash } from "node:crypto";
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";

export type Snapshot = Record<string, string>;

/** `{path: description}` of everything under root except `.ferry/`: `file 644 <sha256>`, `dir 755`, `symlink -> t`. */
export function snapshot(root: string, skip: (path: string) => boolean = () => false): Snapshot {
  const out: Snapshot = {};
  const walk = (rel: string) => {
    for (const name of readdirSync(join(root, rel)).sort()) {
      const path = rel ? `${rel}/${name}` : name;
      if (name === ".ferry" || skip(path)) continue;
      const abs = join(root, path);
      const st = lstatSync(abs);
      const mode = (st.mode & 0o7777).toString(8);
      if (st.isSymbolicLink()) out[path] = `symlink -> ${readlinkSync(abs)}`;
      else if (st.isDirectory()) {
        out[path] = `dir ${mode}`;
        walk(path);
      } else out[path] = `file ${mode} ${createHash("sha256").update(readFileSync(abs)).digest("hex").slice(0, 16)}`;
    }
  };
  walk("");
  return out;
}

/**
 * A snapshot of a tree a watch may still be writing, or null when a path
 * vanished while it was read (a pull renaming its temp file into place, a
 * removal): such a tree is not settled, and a wait on it reads again.
 */
export function settledSnapshot(root: string, skip?: (path: string) => boolean): Snapshot | null {
  try {
    return snapshot(root, skip);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw e;
  }
}

/**
 * Waits out the scanner's racy window (client/scan/stat-key.ts isRacy): a
 * file whose ctime is as recent as the scan's read keeps no fingerprint, and
 * no utimes can age a ctime.
 */
export const pastRacyWindow = (): Promise<void> => new Promise((r) => setTimeout(r, 1100));

/**
 * Waits past one tick of the clock the kernel stamps ctime from (1 to 10 ms,
 * unless the file system has fine-grained timestamps, as Linux 6.13+ gives
 * ext4, xfs, btrfs and tmpfs): a change in the same tick as the last one may
 * leave the ctime as it was. Synchronous, for hooks the engine calls so.
 */
export function nextClockTick(): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
}

/** Writes files (string or bytes content), creating parents. */
export function writeTree(root: string, files: Record<string, string | Uint8Array>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
}

/** Modes a pulled file may carry (pull tests): usual ones, and ones a 022 umask takes bits from. */
export const FILE_MODES = [0o600, 0o644, 0o664, 0o666, 0o700, 0o755, 0o777];

/**
 * `count` small files over `dirs` directories (some in a `lib/` below): every
 * fifth repeats another's content, every seventh other one is empty.
 */
export function variedFiles(count: number, dirs: number): Record<string, string | Uint8Array> {
  const files: Record<string, string | Uint8Array> = {};
  for (let i = 0; i < count; i++) {
    const dir = `pkg-${i % dirs}/${i % 3 === 0 ? "lib/" : ""}`;
    files[`${dir}f${i}.js`] = i % 5 === 0 ? `shared ${i % 4}\n` : i % 7 === 0 ? "" : `module ${i}\n`.repeat(i);
  }
  return files;
}

/** Writes `files`, each with the next of FILE_MODES and its own mtime; returns their paths. */
export function writeVaried(root: string, files: Record<string, string | Uint8Array>): string[] {
  writeTree(root, files);
  const paths = Object.keys(files);
  paths.forEach((path, i) => {
    chmod(root, path, FILE_MODES[i % FILE_MODES.length] as number);
    utimesSync(join(root, path), 1_700_000_000 + i * 61.5, 1_700_000_000 + i * 61.5);
  });
  return paths;
}

export function symlink(root: string, path: string, target: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  symlinkSync(target, join(root, path));
}

export function chmod(root: string, path: string, mode: number): void {
  chmodSync(join(root, path), mode);
}

/** Deterministic pseudo-random bytes (xorshift32), for chunker vectors and large files. */
export function pseudoRandom(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = x & 0xff;
  }
  return out;
}
