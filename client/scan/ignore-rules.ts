/**
 * Which paths stay local: `.ferryignore` at the root (gitignore syntax, read
 * with the `ignore` library) plus patterns given on the command line. The
 * store directory `.ferry/` and the applier's temporary files are always
 * ignored, at any depth. An ignored path is neither pushed nor pulled.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import ignore, { type Ignore } from "ignore";

export const IGNORE_FILE = ".ferryignore";
export const TEMP_PREFIX = ".ferry-tmp-";
const ALWAYS = [".ferry", `${TEMP_PREFIX}*`];
/** Version control directories, kept local with `--ignore-vcs` (synced by default: a container may want the repository). */
export const VCS_DIRS: readonly string[] = [".git", ".hg", ".svn"];

export class IgnoreRules {
  private readonly matcher: Ignore;

  constructor(patterns: readonly string[]) {
    this.matcher = ignore().add([...ALWAYS, ...patterns]);
  }

  /** Rules from `<root>/.ferryignore` (when present) and `extra` patterns. */
  static load(root: string, extra: readonly string[] = []): IgnoreRules {
    let fromFile: string[] = [];
    try {
      fromFile = readFileSync(join(root, IGNORE_FILE), "utf8").split(/\r?\n/);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    }
    return new IgnoreRules([...fromFile, ...extra]);
  }

  /** `path` is workspace-relative; `isDir` makes dir-only patterns (`build/`) apply. */
  ignores(path: string, isDir: boolean): boolean {
    return this.matcher.ignores(isDir ? `${path}/` : path);
  }

  /** True when `path` or any of its ancestors is ignored (for paths that arrive from the server). */
  ignoresPathOrAncestor(path: string, isDir: boolean): boolean {
    const segments = path.split("/");
    for (let i = 1; i < segments.length; i++) {
      if (this.ignores(segments.slice(0, i).join("/"), true)) return true;
    }
    return this.ignores(path, isDir);
  }
}
