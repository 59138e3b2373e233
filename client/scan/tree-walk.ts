/**
 * The scanner's walk, per entry (scanner.ts): list a directory, and decide
 * whether a walked name is synced at all.
 */
import { type BigIntStats, lstatSync, readdirSync } from "node:fs";
import { walkedPathProblem } from "../../protocol/paths.ts";
import { IGNORE_FILE, type IgnoreRules, TEMP_PREFIX } from "./ignore-rules.ts";
import type { KnownPaths } from "./known-paths.ts";
import type { RuleChain } from "./rule-chain.ts";
import { diskKind } from "./stat-key.ts";

/** A directory being walked: its names, sorted, the ignore rules that judge them, and the next one to visit. */
export interface Listing {
  readonly dir: string;
  readonly names: readonly string[];
  readonly rules: RuleChain;
  next: number;
}

/** Paths that cannot be synced (invalid names, unreadable, special files), with the reason. */
export type Skipped = { readonly path: string; readonly reason: string }[];

export class TreeWalk {
  constructor(
    private readonly root: string,
    private readonly ignore: IgnoreRules,
    /** Sees each temporary file of an applier the walk passes (stale-temp.ts); null: left alone. */
    private readonly onTemp: ((rel: string, st: BigIntStats) => void) | null,
  ) {}

  /** `root/rel`: the root is absolute and real, and `rel` a valid path, so there is nothing for `join` to normalize. */
  abs(rel: string): string {
    return rel === "" ? this.root : `${this.root}/${rel}`;
  }

  lstat(rel: string): BigIntStats | null {
    try {
      return lstatSync(this.abs(rel), { bigint: true, throwIfNoEntry: false }) ?? null;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT" || (e as NodeJS.ErrnoException).code === "ENOTDIR") {
        return null;
      }
      throw e;
    }
  }

  /**
   * A directory's names, sorted, and its rules (its `.ferryignore` read
   * again if it holds one); null when it cannot be read, which keeps what
   * the store knew under it.
   */
  list(dir: string, known: KnownPaths, skipped: Skipped | null): Listing | null {
    try {
      const names = readdirSync(this.abs(dir)).sort();
      return { dir, names, rules: this.ignore.listed(dir, names.includes(IGNORE_FILE)), next: 0 };
    } catch (e) {
      // Absence is not deletion: nothing under an unreadable directory is taken for gone. Nor under
      // one whose `.ferryignore` cannot be read: what it would keep local is unknown.
      skipped?.push({ path: dir, reason: (e as NodeJS.ErrnoException).code ?? String(e) });
      known.keepUnder(dir);
      return null;
    }
  }

  /**
   * A walked name's stat, or null when it is not synced (an invalid name, gone
   * meanwhile, a temporary file, a special file, ignored). Its directory's
   * path is valid: the walk enters only directories that passed here.
   */
  entry(rel: string, name: string, rules: RuleChain, known: KnownPaths, skipped: Skipped): BigIntStats | null {
    const problem = walkedPathProblem(rel, name);
    if (problem !== null) {
      skipped.push({ path: rel, reason: problem });
      return null;
    }
    let st: BigIntStats | null;
    try {
      st = this.lstat(rel);
    } catch (e) {
      // Listed but not looked at: a name too long once joined to the root (ENAMETOOLONG, as after
      // the root moved deeper), a directory readable but not searchable (EACCES). Skipped, and what
      // the store knew at and under it kept: absence is not deletion, and one path stops nothing else.
      skipped.push({ path: rel, reason: (e as NodeJS.ErrnoException).code ?? String(e) });
      known.take(rel);
      known.keepUnder(rel);
      return null;
    }
    if (!st) return null;
    if (name.startsWith(TEMP_PREFIX)) {
      this.onTemp?.(rel, st);
      return null;
    }
    const kind = diskKind(st);
    if (kind === null) {
      skipped.push({ path: rel, reason: "not a file, directory or symlink" });
      return null;
    }
    return rules.ignoresEntry(rel, name, kind === "dir") ? null : st;
  }
}
