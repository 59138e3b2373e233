/**
 * Seeded random edits of a tree for the kill tests (kill-anywhere,
 * serve-kill): new, rewritten and same-size rewritten files, mode-only
 * changes, mtimes set back, file/dir/symlink type changes, names that sort
 * differently in UTF-16 and UTF-8; and a snapshot that includes files' mtimes.
 */
import { chmodSync, lstatSync, mkdirSync, rmSync, type Stats, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { pseudoRandom, snapshot } from "./tree.ts";

/** U+FF41 sorts after U+1F600 in UTF-16 (a surrogate, 0xD83D) and before it in UTF-8 (0xEF < 0xF0). */
const NAMES = ["a", "b", "a.b", "\uFF41", "\u{1F600}", "é", "z"];

/** Every path's snapshot line plus, for files and directories' files, the mtime in ms. */
export function snapshotWithMtimes(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [path, line] of Object.entries(snapshot(root))) {
    out[path] = line.startsWith("file ") ? `${line} @${Math.floor(lstatSync(join(root, path)).mtimeMs)}` : line;
  }
  return out;
}

/** What is at `abs`, or null when nothing is (a file where a directory on the way should be included). */
export function lstatOrNull(abs: string): Stats | null {
  try {
    return lstatSync(abs);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT" || (e as NodeJS.ErrnoException).code === "ENOTDIR") return null;
    throw e;
  }
}

/** Makes way for `path`: a file or symlink where one of its ancestors should be goes, and so does what is at it. */
function clear(root: string, path: string): void {
  const parts = path.split("/");
  for (let i = 1; i < parts.length; i++) {
    const at = join(root, ...parts.slice(0, i));
    const st = lstatOrNull(at);
    if (st && !st.isDirectory()) rmSync(at);
  }
  rmSync(join(root, path), { recursive: true, force: true });
  mkdirSync(dirname(join(root, path)), { recursive: true });
}

/** One seeded edit of the tree under `root`. */
export function edit(root: string, random: () => number, step: number): void {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)] as T;
  const depth = 1 + Math.floor(random() * 3);
  const path = Array.from({ length: depth }, () => pick(NAMES)).join("/");
  const abs = join(root, path);
  const st = lstatOrNull(abs);
  const op = random();
  if (st?.isFile() && op < 0.2) {
    // Same size, other bytes, straight after the last write: the racy case.
    const size = st.size;
    writeFileSync(
      abs,
      Buffer.from(pseudoRandom(size, step + 1)).map((b) => b ^ 0x5a),
    );
  } else if (st?.isFile() && op < 0.3) {
    // The executable bit toggled, nothing else.
    chmodSync(abs, st.mode & 0o100 ? 0o644 : 0o755);
  } else if (st && !st.isSymbolicLink() && op < 0.4) {
    // A mode-only change (files and directories alike).
    const mode = pick([0o600, 0o644, 0o700, 0o755]);
    chmodSync(abs, st.isDirectory() ? mode | 0o700 : mode);
  } else if (st?.isFile() && op < 0.5) {
    // The mtime set back, content rewritten at the same size.
    const old = 1_600_000_000 + step;
    writeFileSync(abs, Buffer.alloc(st.size, step & 0xff));
    utimesSync(abs, old, old);
  } else if (st && op < 0.6) {
    rmSync(abs, { recursive: true, force: true });
  } else if (op < 0.7) {
    clear(root, path);
    mkdirSync(abs);
  } else if (op < 0.78) {
    clear(root, path);
    symlinkSync(pick(["a", "../b", "nowhere/at/all", "\u{1F600}"]), abs);
  } else {
    clear(root, path);
    const big = random() < 0.15;
    writeFileSync(abs, big ? pseudoRandom(100_000 + Math.floor(random() * 300_000), step) : `v${step} ${path}\n`);
  }
}
