/**
 * The rules that apply in one directory (ignore-rules.ts): the command
 * line's, then every `.ferryignore` from that directory up to the root,
 * each matched relative to the directory that holds it, as git reads
 * `.gitignore` files. The first level with a rule matching a path decides
 * (its last matching rule, `!` included): the command line first, then the
 * nearest file, then its parents'. A path under an ignored directory is
 * ignored whatever the rules below say (the walk never enters it; pulled
 * paths are asked name by name from the root, `ignoresPathOrAncestor`).
 */
import ignore, { type Ignore } from "ignore";

import { isReservedName } from "../../protocol/paths.ts";

/**
 * ferry's own names (protocol/paths.ts), ignored at any depth whatever any
 * rule says: the store, temporary files, and `ferry serve`'s default data
 * directory (started in a synced project, as README shows, its packs were
 * pushed, each push wrote a pack, and the disk filled).
 */
export { SERVER_DATA_NAME, STORE_NAME, TEMP_PREFIX } from "../../protocol/paths.ts";

/** The rules of one level: a `.ferryignore` (or the command line's patterns, at the root). */
export class RuleLevel {
  readonly matcher: Ignore;
  /** Every rule matches on the last name of a path alone (see `matchesOnName`). */
  readonly byName: boolean;
  /** When every rule names a file or directory exactly (literalName), the names it ignores. */
  readonly literals: Literals | null;

  constructor(
    /** The directory holding the rules ("" for the root and the command line). */
    readonly dir: string,
    /** The lines as read: a file read again with the same text keeps its level. */
    readonly text: string,
  ) {
    const lines = text.split(/\r?\n/);
    this.matcher = ignore().add(lines);
    this.byName = lines.every(matchesOnName);
    this.literals = literalsOf(lines);
  }
}

interface Literals {
  readonly any: ReadonlySet<string>;
  readonly dirs: ReadonlySet<string>;
}

/** What decides for the paths directly in one directory: its levels, the first to match deciding. */
export class RuleChain {
  /** Every level names files exactly: the answer is a set lookup, without the library (~10 µs a first answer). */
  private readonly literals: Literals | null;
  /** Every level matches on names: answers kept by name and kind (`name` or `name/`), as a tree repeats its names. */
  private readonly byName: boolean;
  private readonly nameAnswers = new Map<string, boolean>();

  constructor(
    /** Deciding first to last: the command line's, then the nearest file's, up to the root's. */
    private readonly levels: readonly RuleLevel[],
  ) {
    this.byName = levels.every((l) => l.byName);
    this.literals = levels.every((l) => l.literals !== null) ? unionOf(levels) : null;
  }

  /** This chain with `level` (a file in a directory below) deciding after the command line, before the rest. */
  below(level: RuleLevel, commandLine: boolean): RuleChain {
    const at = commandLine ? 1 : 0;
    return new RuleChain([...this.levels.slice(0, at), level, ...this.levels.slice(at)]);
  }

  /** Whether `rel` (named `name`, in this chain's directory) is ignored; its directory is not. */
  ignoresEntry(rel: string, name: string, isDir: boolean): boolean {
    if (isReservedName(name)) return true;
    if (this.literals) return this.literals.any.has(name) || (isDir && this.literals.dirs.has(name));
    if (!this.byName) return this.decide(rel, isDir);
    const key = isDir ? `${name}/` : name;
    let answer = this.nameAnswers.get(key);
    if (answer === undefined) {
      answer = this.decide(name, isDir);
      this.nameAnswers.set(key, answer);
    }
    return answer;
  }

  /** The first level whose rules match `path` decides; no match: not ignored. */
  private decide(path: string, isDir: boolean): boolean {
    for (const level of this.levels) {
      // A name-only chain asks by name (`path` is then the name, the same answer at any depth).
      const sub = level.dir === "" || !path.includes("/") ? path : path.slice(level.dir.length + 1);
      const { ignored, unignored } = level.matcher.test(isDir ? `${sub}/` : sub);
      if (ignored) return true;
      if (unignored) return false;
    }
    return false;
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

/** The names `lines` ignore when every line is a literal name, a blank or a comment; else null. */
function literalsOf(lines: readonly string[]): Literals | null {
  const any = new Set<string>();
  const dirs = new Set<string>();
  for (const line of lines) {
    if (line === "" || line.startsWith("#")) continue;
    const literal = literalName(line);
    if (literal === null) return null;
    (literal.dirOnly ? dirs : any).add(literal.name);
  }
  return { any, dirs };
}

/** Literal levels together: with no negation among them, a name any of them ignores is ignored. */
function unionOf(levels: readonly RuleLevel[]): Literals {
  const any = new Set<string>();
  const dirs = new Set<string>();
  for (const { literals } of levels) {
    for (const n of literals?.any ?? []) any.add(n);
    for (const n of literals?.dirs ?? []) dirs.add(n);
  }
  return { any, dirs };
}
