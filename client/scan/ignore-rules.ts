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
/** The store directory (client/store/sqlite-store.ts's STORE_DIR), ignored at any depth. */
const STORE_NAME = ".ferry";
const ALWAYS = [STORE_NAME, `${TEMP_PREFIX}*`];
/** Version control directories, kept local with `--ignore-vcs` (synced by default: a container may want the repository). */
export const VCS_DIRS: readonly string[] = [".git", ".hg", ".svn"];

export class IgnoreRules {
  private readonly matcher: Ignore;
  /** Every rule matches on the last name of a path alone (see `matchesOnName`): the walk asks by name. */
  private readonly byName: boolean;
  /** Answers by name and kind (`name` or `name/`), for the walk: a tree repeats its names. */
  private readonly nameAnswers = new Map<string, boolean>();
  /**
   * When every rule names a file or directory exactly (literalName), the
   * names they ignore: the walk then answers without the library, whose
   * first answer for each name costs ~10 µs (~20 ms of a 3,000-file rescan).
   */
  private readonly literals: { readonly any: Set<string>; readonly dirs: Set<string> } | null;

  /** `patterns`: gitignore lines, besides ferry's own. */
  constructor(patterns: readonly string[]) {
    this.matcher = ignore().add([...ALWAYS, ...patterns]);
    this.byName = patterns.every(matchesOnName);
    this.literals = literalsOf(patterns);
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

  /**
   * `ignores` for the walk (scanner.ts), which never enters an ignored
   * directory: `rel` is `parent/name` with `parent` not ignored. When every
   * rule matches on the name alone, the answer is the name's, asked once per
   * name; otherwise the whole path is matched, as `ignores` does.
   */
  ignoresEntry(rel: string, name: string, isDir: boolean): boolean {
    if (this.literals) {
      return (
        name === STORE_NAME ||
        name.startsWith(TEMP_PREFIX) ||
        this.literals.any.has(name) ||
        (isDir && this.literals.dirs.has(name))
      );
    }
    if (!this.byName) return this.ignores(rel, isDir);
    const key = isDir ? `${name}/` : name;
    let answer = this.nameAnswers.get(key);
    if (answer === undefined) {
      answer = this.matcher.ignores(key);
      this.nameAnswers.set(key, answer);
    }
    return answer;
  }

  /**
   * True when `path` or any of its ancestors is ignored (for paths that
   * arrive from the server). Asked name by name from the root, as the walk
   * asks (`ignoresEntry`: each ancestor is known not ignored when the next
   * is asked), so a pull of thousands of paths in a few directories matches
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
}

/**
 * Whether a pattern line can only match the last name of a path, whatever
 * directory holds it: a gitignore pattern without a slash (but a trailing
 * one, which only says "directories") matches the name at any depth. The
 * `ignore` library turns such a pattern into `(?:^|/)<body>(?=$|/$)`, whose
 * body cannot cross a slash unless it holds a bracket expression (`[!a]`
 * takes one) or `**`. One pattern with a slash, a bracket or `**` sends the
 * walk back to whole-path matching for all of them (a later `!` rule may
 * undo an earlier one, so rules are never split). Comments and blank lines
 * match nothing.
 */
export function matchesOnName(line: string): boolean {
  const text = line.trim();
  if (text === "" || text.startsWith("#")) return true;
  const body = text.startsWith("!") ? text.slice(1) : text;
  const core = body.endsWith("/") ? body.slice(0, -1) : body;
  return core !== "" && !/[/[]/.test(core) && !core.includes("**");
}

/**
 * A pattern line that names one file or directory exactly, at any depth
 * (`node_modules`, `dist/`: the commonest rules): name characters only, no
 * slash but a trailing one (directories only), no glob, escape, negation,
 * comment or surrounding space. Null for any other line.
 */
function literalName(line: string): { readonly name: string; readonly dirOnly: boolean } | null {
  if (!/^[A-Za-z0-9._@+-]+\/?$/.test(line)) return null;
  const dirOnly = line.endsWith("/");
  const name = dirOnly ? line.slice(0, -1) : line;
  return /^\.+$/.test(name) ? null : { name, dirOnly };
}

/** The names `patterns` ignore when every line is a literal name, a blank or a comment; else null. */
function literalsOf(patterns: readonly string[]): { any: Set<string>; dirs: Set<string> } | null {
  const any = new Set<string>();
  const dirs = new Set<string>();
  for (const line of patterns) {
    if (line === "" || line.startsWith("#")) continue;
    const literal = literalName(line);
    if (literal === null) return null;
    (literal.dirOnly ? dirs : any).add(literal.name);
  }
  return { any, dirs };
}
