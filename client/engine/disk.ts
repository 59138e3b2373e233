/**
 * Disk helpers for the applier. Every path is checked from the root down
 * with lstat, so nothing here follows a symlink: an ancestor that is a
 * symlink makes the path refused, whatever the server sent.
 */
import { type BigIntStats, lstatSync } from "node:fs";
import { join } from "node:path";
import { type Entry, symlinkTargetProblem } from "../../protocol/entry.ts";
import { pathProblem, reservedProblem } from "../../protocol/paths.ts";
import { statKey } from "../scan/stat-key.ts";

/** A server path the host will not apply; reported, never fatal to the sync. */
export class RefusedPath extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`refused '${path}': ${reason}`);
    this.name = "RefusedPath";
  }
}

/**
 * Refuses what is not a valid workspace path or names one of ferry's own
 * files (the store, temporary files, a local server's data), and a symlink
 * whose target no push may carry (a server stored it before PROTOCOL.md
 * §4.5 rule 0 refused it). Entries read off the wire met these rules in
 * readAnswerChanges already; a stored deferral or a test's may not have.
 */
export function checkServerEntry(e: Entry): void {
  const { path } = e;
  const problem =
    pathProblem(path) ?? reservedProblem(path) ?? (e.kind === "symlink" ? symlinkTargetProblem(e.target) : null);
  if (problem !== null) throw new RefusedPath(path, problem);
}

/**
 * The applier's re-check before a rename or unlink: the path is as its
 * decision saw it (kind, size, mtime, inode, mode, and ctime, which a chmod
 * or an in-place write moves too: a file's or symlink's fingerprint holds
 * it, a directory's is compared here). Both null: still nothing there.
 */
export function sameDisk(before: BigIntStats | null | undefined, now: BigIntStats | null): boolean {
  if (!before || !now) return !before && !now;
  return statKey(before) === statKey(now) && before.ctimeNs === now.ctimeNs;
}

/**
 * The lstat of `abs`, or null when nothing is there. Asked without an
 * exception for a missing path (`throwIfNoEntry`): a pull asks about every
 * new path three times before it exists, and Node's ENOENT error, with its
 * stack, cost more than the system call (issue 13: lstat was ~5% of a
 * pull's CPU).
 */
export function lstatOrNull(abs: string): BigIntStats | null {
  try {
    return lstatSync(abs, { bigint: true, throwIfNoEntry: false }) ?? null;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw e;
  }
}

/**
 * The state of a path's ancestors, checked from the root down:
 * `ok` (all real directories), `missing` (the first missing one), or
 * `blocked` (the first that is a file or a symlink: the applier replaces it,
 * keeping a local change as a conflict copy, and never writes through it).
 * Anything else (a FIFO, a socket, a device) is refused.
 */
export type Ancestors =
  | { readonly state: "ok" }
  | { readonly state: "missing"; readonly at: string }
  | { readonly state: "blocked"; readonly at: string; readonly symlink: boolean };

export function inspectAncestors(
  root: string,
  path: string,
  knownDirs?: KnownDirs,
  /** Called with each ancestor found to be a directory that `knownDirs` did not hold yet. */
  onDir?: (rel: string, st: BigIntStats) => void,
): Ancestors {
  // The deepest ancestor already known: every ancestor of a known directory is known too (they are
  // added root down, and forgotten all at once), so only those below it need a look. Asking each
  // ancestor in turn cost a hash of every prefix for every path, quadratic in the depth: a pull of
  // a chain 2,000 directories deep spent 25 s of CPU here.
  let known = path.lastIndexOf("/");
  while (known > 0 && !knownDirs?.has(path.slice(0, known))) known = path.lastIndexOf("/", known - 1);
  for (let end = path.indexOf("/", known + 1); end > 0; end = path.indexOf("/", end + 1)) {
    const rel = path.slice(0, end);
    const st = lstatOrNull(join(root, rel));
    if (st === null) return { state: "missing", at: rel };
    if (st.isDirectory()) {
      knownDirs?.add(rel);
      onDir?.(rel, st);
      continue;
    }
    if (st.isFile() || st.isSymbolicLink()) return { state: "blocked", at: rel, symlink: st.isSymbolicLink() };
    throw new RefusedPath(path, `its ancestor '${rel}' is not a directory`);
  }
  return { state: "ok" };
}

/**
 * Directories this applier has seen to be real directories (lstat), so a
 * page of 5,000 entries in a few directories costs a few lstats, not one per
 * ancestor per entry. The applier clears it whenever it removes or moves a
 * path, which is the only way (short of another local process) one of them
 * stops being a directory.
 */
export type KnownDirs = Set<string>;

const utf8 = new TextEncoder();

/**
 * `name.conflict-<host>-<date>.ext` beside `path` (the extension kept, so an
 * editor still opens it; a dotfile like `.env` has none), `<host>` the
 * host's label, `<date>` UTC to the second (`20261201-061314`); shortened to
 * fit a 255-byte segment, with `-2`, `-3`... when taken. `taken` says whether
 * a candidate exists (on disk or in the store).
 */
export function conflictPath(path: string, hostTag: string, at: Date, taken: (p: string) => boolean): string {
  const slash = path.lastIndexOf("/");
  const dir = slash < 0 ? "" : path.slice(0, slash + 1);
  const base = path.slice(slash + 1);
  const dot = base.lastIndexOf(".");
  const ext = dot > 0 && utf8.encode(base.slice(dot)).byteLength <= 32 ? base.slice(dot) : "";
  let name = ext ? base.slice(0, dot) : base;
  const date = at.toISOString().slice(0, 19).replace(/[-:]/g, "").replace("T", "-");
  for (let n = 1; ; n++) {
    const suffix = `.conflict-${hostTag}-${date}${n > 1 ? `-${n}` : ""}${ext}`;
    while (utf8.encode(name + suffix).byteLength > 255) name = Array.from(name).slice(0, -1).join("");
    const candidate = dir + name + suffix;
    if (!taken(candidate)) return candidate;
  }
}
