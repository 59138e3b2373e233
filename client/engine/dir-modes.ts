/**
 * Directory mtimes, and modes without owner write (a 0555 directory), are
 * applied after the directory's contents: writing a child moves its
 * directory's mtime, and a host that is not root could otherwise not
 * create, replace or remove anything under it, and every later change there
 * would fail with EACCES. The applier gives such a directory owner rwx while
 * the pull writes, and `finish` (pull.ts, when the pull ends, however it
 * ends) sets the server's mode, deepest directory first.
 *
 * A directory already locked on disk (pulled before) is unlocked the same
 * way when a write under it fails with EACCES, and locked again by `finish`.
 */
import { chmodSync, lstatSync, utimesSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { permBits, statKey, utimeSeconds } from "../scan/stat-key.ts";
import { lstatOrNull } from "./disk.ts";
import { refusalOf } from "./refusals.ts";

/** A directory whose mode `unlock` or `finish` set, with its stat fingerprint before and after. */
export interface Unlocked {
  readonly path: string;
  readonly before: string | null;
  readonly after: string | null;
}

const OWNER_RWX = 0o700;

export class DirModes {
  /** Directory (root-relative) to the mode it gets when the pull ends. */
  private readonly final = new Map<string, number>();
  /** Directory to the server's mtime (ms), set when the pull ends. */
  private readonly mtimes = new Map<string, number>();

  constructor(private readonly root: string) {}

  /**
   * The mode to give directory `path` now, for the server's `mode`: with
   * owner rwx, until `finish`, which also sets the server's `mtime`.
   */
  modeNow(path: string, mode: number, mtime: number): number {
    this.mtimes.set(path, mtime);
    if ((mode & OWNER_RWX) === OWNER_RWX) {
      this.final.delete(path);
      return mode;
    }
    this.final.set(path, mode);
    return mode | OWNER_RWX;
  }

  /**
   * After EACCES on `abs`: gives owner rwx to every directory from the root
   * down to `abs` (itself included, when a directory) that this user owns
   * and that lacks it. Returns those directories with their fingerprints
   * before and after, so the applier can keep its records matching the disk
   * (an unlock is not a local change); none means the refusal stands.
   */
  unlock(abs: string): Unlocked[] {
    const rel = relative(this.root, abs);
    if (rel.startsWith("..") || rel === "") return [];
    const segments = rel.split(sep);
    const out: Unlocked[] = [];
    for (let i = 1; i <= segments.length; i++) {
      const dir = segments.slice(0, i).join("/");
      const st = lstatOrNull(join(this.root, dir));
      if (!st?.isDirectory() || Number(st.uid) !== process.getuid?.()) continue;
      const mode = permBits(st);
      if ((mode & OWNER_RWX) === OWNER_RWX) continue;
      if (!this.final.has(dir)) this.final.set(dir, mode);
      chmodSync(join(this.root, dir), mode | OWNER_RWX);
      out.push({ path: dir, before: statKey(st), after: statKey(lstatSync(join(this.root, dir), { bigint: true })) });
    }
    return out;
  }

  /**
   * Sets every deferred mtime and mode, children before parents; a directory
   * gone meanwhile is skipped, and so is one out of reach (a name too long
   * once joined to the root, no permission on the way): its change was
   * refused, and the rest of the pull stands. Returns the directories whose
   * mode it set, with their fingerprints before and after (Applier.finishDirs).
   */
  finish(): Unlocked[] {
    const set: Unlocked[] = [];
    const dirs = [...new Set([...this.final.keys(), ...this.mtimes.keys()])].sort((a, b) => depth(b) - depth(a));
    for (const dir of dirs) {
      const abs = join(this.root, dir);
      if (!this.isDirectory(abs, dir)) continue;
      const mtime = this.mtimes.get(dir);
      try {
        if (mtime !== undefined) {
          const seconds = utimeSeconds(mtime);
          utimesSync(abs, seconds, seconds);
        }
      } catch {
        // Another user's directory (EPERM): its mtime is not part of what a pull must get right.
      }
      const mode = this.final.get(dir);
      if (mode !== undefined) {
        const before = statKey(lstatSync(abs, { bigint: true }));
        chmodSync(abs, mode);
        set.push({ path: dir, before, after: statKey(lstatSync(abs, { bigint: true })) });
      }
    }
    this.final.clear();
    this.mtimes.clear();
    return set;
  }

  private isDirectory(abs: string, dir: string): boolean {
    try {
      return lstatOrNull(abs)?.isDirectory() ?? false;
    } catch (e) {
      if (refusalOf(e, dir) === null) throw e;
      return false;
    }
  }
}

function depth(path: string): number {
  let n = 0;
  for (let i = path.indexOf("/"); i >= 0; i = path.indexOf("/", i + 1)) n++;
  return n;
}
