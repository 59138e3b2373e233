/**
 * Which paths stay local: every `.ferryignore` in the tree (gitignore
 * syntax and semantics, one file per directory, each read relative to its
 * directory: rule-chain.ts) plus patterns given on the command line. The
 * store directory `.ferry/` and the applier's temporary files are always
 * ignored, at any depth. An ignored path is neither pushed nor pulled.
 *
 * The rules are live: the walk reads each directory's file as it lists the
 * directory (`listed`), a watch or a pull that changes a file reads it again
 * (`reload`), and a path asked about in a directory not walked yet reads
 * the files on its way down once. Every change of the rules moves
 * `generation` and tells the listeners (`onChange`): the engine then scans
 * again before it pushes, and a watch watches what is no longer ignored.
 */
import { lstatSync, readFileSync } from "node:fs";
import { toHex } from "../../protocol/hash.ts";
import { sha256Sync } from "../content/hash.ts";
import { RuleChain, RuleLevel, TEMP_PREFIX } from "./rule-chain.ts";

export { matchesOnName } from "./rule-chain.ts";
export { TEMP_PREFIX };
export const IGNORE_FILE = ".ferryignore";

/** Version control directories, kept local with `--ignore-vcs` (synced by default: a container may want the repository). */
export const VCS_DIRS: readonly string[] = [".git", ".hg", ".svn"];

export class IgnoreRules {
  /** Each directory looked at: its file's level, null when it has none (absent: not looked at yet). */
  private readonly files = new Map<string, RuleLevel | null>();
  /** The chain deciding in each directory asked about; dropped whenever a file changes. */
  private readonly chains = new Map<string, RuleChain>();
  /** The command line's level, deciding first everywhere; null without patterns. */
  private readonly commandLine: RuleLevel | null;
  private readonly listeners = new Set<() => void>();
  /** Directories whose file withFiles gave: the disk's does not replace it. */
  private readonly pinned = new Set<string>();
  /** Moves with every change of the rules found on disk (not with a first read). */
  generation = 0;

  /**
   * `patterns`: gitignore lines given for this run, besides the files.
   * `root`: the tree whose `.ferryignore` files apply; null reads none.
   */
  constructor(
    private readonly patterns: readonly string[],
    private readonly root: string | null = null,
  ) {
    this.commandLine = patterns.length > 0 ? new RuleLevel("", patterns.join("\n")) : null;
  }

  /** The `.ferryignore` files under `root` and `extra` patterns (the command line's). */
  static load(root: string, extra: readonly string[] = []): IgnoreRules {
    return new IgnoreRules(extra, root);
  }

  /** Calls `listener` after every change of the rules; returns how to stop. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * The walk listed `dir` (scanner.ts): whether it holds a `.ferryignore`
   * settles what its rules are, read again each walk (a change made while no
   * watch ran, or that it missed). Returns the chain deciding for its names.
   */
  listed(dir: string, hasFile: boolean): RuleChain {
    this.settle(dir, hasFile ? this.read(dir) : null);
    return this.chainOf(dir);
  }

  /**
   * These rules as they would be with some directories' files as given
   * (their text, null for none): what a pull that brings those files makes
   * them, for `ferry status` to judge by (engine/status-rules.ts). A copy;
   * these rules are left as they are.
   */
  withFiles(texts: ReadonlyMap<string, string | null>): IgnoreRules {
    const copy = new IgnoreRules(this.patterns, this.root);
    for (const [dir, level] of this.files) copy.files.set(dir, level);
    for (const [dir, text] of texts) {
      copy.files.set(dir, text === null ? null : new RuleLevel(dir, text));
      copy.pinned.add(dir);
    }
    return copy;
  }

  /** `dir/.ferryignore` was written, changed or removed (a watch's event, a pull): read it again. */
  reload(dir: string): void {
    this.settle(dir, this.read(dir));
  }

  /**
   * A digest of the rules as read so far: the command line's patterns and
   * every `.ferryignore` found, with its directory. After a walk, the same
   * tree gives the same digest in any process: the store keeps it to know,
   * in a later command, that the rules changed since it left ignored paths
   * alone (engine/ignored-left.ts). A directory asked about without a file
   * counts as none, whether it was asked or not.
   */
  digest(): string {
    const parts = [`\0${this.commandLine?.text ?? ""}`];
    for (const [dir, level] of this.files) if (level !== null) parts.push(`${dir}\0${level.text}`);
    parts.sort();
    return toHex(sha256Sync(new TextEncoder().encode(parts.join("\0\0"))));
  }

  /** `path` is workspace-relative and its directory not ignored; `isDir` makes dir-only patterns (`build/`) apply. */
  ignores(path: string, isDir: boolean): boolean {
    const slash = path.lastIndexOf("/");
    return this.chainOf(slash < 0 ? "" : path.slice(0, slash)).ignoresEntry(path, path.slice(slash + 1), isDir);
  }

  /** `ignores` for a walk that never enters an ignored directory: `rel` is `parent/name`. */
  ignoresEntry(rel: string, name: string, isDir: boolean): boolean {
    return this.chainOf(rel.length === name.length ? "" : rel.slice(0, rel.length - name.length - 1)).ignoresEntry(
      rel,
      name,
      isDir,
    );
  }

  /**
   * True when `path` or any of its ancestors is ignored (for paths that
   * arrive from the server, or a watcher). Asked name by name from the root,
   * as the walk asks (each ancestor known not ignored when the next is
   * asked), so a pull of thousands of paths in a few directories matches
   * each name once, not every ancestor of every path.
   */
  ignoresPathOrAncestor(path: string, isDir: boolean): boolean {
    let from = 0;
    for (let slash = path.indexOf("/"); slash >= 0; slash = path.indexOf("/", from)) {
      if (this.ignoresEntry(path.slice(0, slash), path.slice(from, slash), true)) return true;
      from = slash + 1;
    }
    return this.ignoresEntry(path, path.slice(from), isDir);
  }

  /** The chain deciding for the names in `dir` (not itself ignored), built once per directory. */
  private chainOf(dir: string): RuleChain {
    let chain = this.chains.get(dir);
    if (chain !== undefined) return chain;
    const parent = dir === "" ? null : this.chainOf(dir.includes("/") ? dir.slice(0, dir.lastIndexOf("/")) : "");
    let file = this.files.get(dir);
    if (file === undefined) {
      const text = this.read(dir);
      file = text === null ? null : new RuleLevel(dir, text);
      this.files.set(dir, file);
    }
    const base = parent ?? new RuleChain(this.commandLine ? [this.commandLine] : []);
    chain = file ? base.below(file, this.commandLine !== null) : base;
    this.chains.set(dir, chain);
    return chain;
  }

  /** Records what `dir` holds (`text`: its file's, null for none); a change from what it held is a change of the rules. */
  private settle(dir: string, text: string | null): void {
    const before = this.files.get(dir);
    if (this.pinned.has(dir) || (before !== undefined && (before?.text ?? null) === text)) return;
    this.files.set(dir, text === null ? null : new RuleLevel(dir, text));
    this.chains.clear();
    // A first look is no change: nothing was decided with what it did not know.
    if (before === undefined) return;
    this.generation++;
    for (const listener of this.listeners) listener();
  }

  /**
   * The text of `dir`'s file as on disk now: null when there is none (or no
   * root), or it is not a regular file (a symlink is not followed out of the
   * tree). Looked at first, without an exception's cost for the usual
   * directory that has none (a pull asks of thousands).
   */
  private read(dir: string): string | null {
    if (this.root === null) return null;
    const path = dir === "" ? `${this.root}/${IGNORE_FILE}` : `${this.root}/${dir}/${IGNORE_FILE}`;
    try {
      if (!lstatSync(path, { throwIfNoEntry: false })?.isFile()) return null;
      return readFileSync(path, "utf8");
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // Gone, or its directory gone or replaced: no rules there. Too long to name from the root: beyond
      // what ferry reaches there, as the scan skips such paths (deep-tree.test). Anything else (unreadable)
      // stops the scan: what it would ignore is unknown, and pushing it might send what was meant to stay here.
      if (code === "ENOENT" || code === "ENOTDIR" || code === "EISDIR" || code === "ENAMETOOLONG") return null;
      throw e;
    }
  }
}

/** Whether `path` names a `.ferryignore`; its directory when it does ("" at the root), else null. */
export function ruleFileDir(path: string): string | null {
  if (path === IGNORE_FILE) return "";
  return path.endsWith(`/${IGNORE_FILE}`) ? path.slice(0, -IGNORE_FILE.length - 1) : null;
}
