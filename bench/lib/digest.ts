/**
 * What "the same tree" means for the benchmarks: the same paths, kinds,
 * permission bits, file bytes and symlink targets. Every push and pull is
 * checked with this before its time is recorded. mtimes are compared
 * separately and only reported: rsync -a keeps them, and ferry carries them,
 * but a tree with other mtimes is still the same tree.
 */
import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";

export interface TreeDigest {
  readonly files: number;
  readonly dirs: number;
  readonly symlinks: number;
  readonly bytes: number;
  /** SHA-256 over every entry's line, in path order (hex). */
  readonly digest: string;
  /** Path to its line: `file 644 <size> <sha256>`, `dir 755`, `symlink <target>`. */
  readonly lines: ReadonlyMap<string, string>;
  readonly mtimes: ReadonlyMap<string, number>;
}

/** Walks `root` without following symlinks. Names in `exclude` are skipped at every depth (e.g. `.ferry`). */
export function digestTree(root: string, exclude: readonly string[] = [".ferry"]): TreeDigest {
  const lines = new Map<string, string>();
  const mtimes = new Map<string, number>();
  let files = 0;
  let dirs = 0;
  let symlinks = 0;
  let bytes = 0;
  const walk = (rel: string) => {
    const names = readdirSync(rel === "" ? root : join(root, rel)).sort();
    for (const name of names) {
      if (exclude.includes(name)) continue;
      const path = rel === "" ? name : `${rel}/${name}`;
      const abs = join(root, path);
      const st = lstatSync(abs);
      const mode = (st.mode & 0o7777).toString(8);
      if (st.isSymbolicLink()) {
        symlinks++;
        lines.set(path, `symlink ${readlinkSync(abs)}`);
      } else if (st.isDirectory()) {
        dirs++;
        lines.set(path, `dir ${mode}`);
        walk(path);
      } else if (st.isFile()) {
        files++;
        bytes += st.size;
        const sha = createHash("sha256").update(readFileSync(abs)).digest("hex");
        lines.set(path, `file ${mode} ${st.size} ${sha}`);
        mtimes.set(path, Math.floor(st.mtimeMs));
      } else {
        lines.set(path, "other");
      }
    }
  };
  walk("");
  const h = createHash("sha256");
  for (const path of [...lines.keys()].sort()) h.update(`${path}\0${lines.get(path)}\n`);
  return { files, dirs, symlinks, bytes, digest: h.digest("hex"), lines, mtimes };
}

export interface TreeDiff {
  readonly same: boolean;
  /** The first differences, `path: expected → actual`. */
  readonly differences: readonly string[];
  readonly differenceCount: number;
  /** Files whose mtime differs by more than 1 s (reported, not a failure). */
  readonly mtimeMismatches: number;
}

export function compareTrees(expected: TreeDigest, actual: TreeDigest, show = 10): TreeDiff {
  const differences: string[] = [];
  let count = 0;
  const note = (path: string, a: string | undefined, b: string | undefined) => {
    count++;
    if (differences.length < show) differences.push(`${path}: ${a ?? "(absent)"} → ${b ?? "(absent)"}`);
  };
  for (const [path, line] of expected.lines)
    if (actual.lines.get(path) !== line) note(path, line, actual.lines.get(path));
  for (const [path, line] of actual.lines) if (!expected.lines.has(path)) note(path, undefined, line);
  let mtimeMismatches = 0;
  for (const [path, m] of expected.mtimes) {
    const other = actual.mtimes.get(path);
    if (other !== undefined && Math.abs(other - m) > 1000) mtimeMismatches++;
  }
  return {
    same: count === 0 && expected.digest === actual.digest,
    differences,
    differenceCount: count,
    mtimeMismatches,
  };
}

/** Throws with the first differences unless the trees are the same. */
export function assertSameTree(what: string, expected: TreeDigest, actual: TreeDigest): TreeDiff {
  const diff = compareTrees(expected, actual);
  if (!diff.same) {
    throw new Error(`${what}: ${diff.differenceCount} differences\n  ${diff.differences.join("\n  ")}`);
  }
  return diff;
}
