/**
 * A host verb's command line read without commander (cli.ts): a push, pull,
 * sync or status is a short process, and loading commander and defining
 * every command cost it ~20 ms of CPU (BENCHMARKS.md section 14). Only a
 * plain command line is read here: the verb, one directory, and options of
 * HOST_OPTIONS as `--name value`, `--name=value`, `-w value`, `-v`, `-q`.
 * Anything else (help, an unknown or repeated-short option, a missing or
 * dash-led value, a value outside its choices, `--`, two directories) is
 * left to commander, which reads it or explains the mistake as before.
 */
import { type HostOption, hostOptionsOf } from "./host-options.ts";
import type { HostFlags, HostVerb } from "./session.ts";

/** What commander would hand the verb's action: its directory and its flags. */
export interface HostCommandLine {
  readonly verb: HostVerb;
  readonly dir: string;
  readonly flags: HostFlags & { watch?: boolean; interval?: string; settle?: string };
}

const VERBS: readonly string[] = ["push", "pull", "sync", "status"];

/** One option as the command line names it. */
interface Spelled {
  readonly option: HostOption;
  /** Its key in the flags (commander's: `--dry-run` → `dryRun`, `--no-progress` → `progress`). */
  readonly key: string;
  readonly takesValue: boolean;
  readonly negated: boolean;
}

function spellingsOf(verb: HostVerb): Map<string, Spelled> {
  const byName = new Map<string, Spelled>();
  for (const option of hostOptionsOf(verb)) {
    const long = /--([a-z-]+)/.exec(option.flags)?.[1] as string;
    const negated = long.startsWith("no-");
    const key = (negated ? long.slice(3) : long).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    const spelled = { option, key, takesValue: option.flags.includes("<"), negated };
    byName.set(`--${long}`, spelled);
    const short = /^(-[a-zA-Z]),/.exec(option.flags)?.[1];
    if (short) byName.set(short, spelled);
  }
  return byName;
}

/** `argv` as process.argv (node, script, verb, ...), or null when commander is to read it. */
export function parseHostArgv(argv: readonly string[]): HostCommandLine | null {
  const verb = argv[2];
  if (verb === undefined || !VERBS.includes(verb)) return null;
  const spellings = spellingsOf(verb as HostVerb);
  const flags: Record<string, string | boolean | string[]> = {};
  for (const s of spellings.values()) if (s.negated) flags[s.key] = true;
  const dirs: string[] = [];
  for (let i = 3; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (!arg.startsWith("-")) {
      dirs.push(arg);
      continue;
    }
    const eq = arg.startsWith("--") ? arg.indexOf("=") : -1;
    const spelled = spellings.get(eq === -1 ? arg : arg.slice(0, eq));
    if (spelled === undefined) return null;
    if (!spelled.takesValue) {
      if (eq !== -1) return null;
      flags[spelled.key] = !spelled.negated;
      continue;
    }
    const value = eq === -1 ? argv[++i] : arg.slice(eq + 1);
    if (value === undefined || value.startsWith("-")) return null;
    const { choices, repeats } = spelled.option;
    if (choices && !choices.includes(value)) return null;
    const previous = flags[spelled.key];
    flags[spelled.key] = repeats ? [...(Array.isArray(previous) ? previous : []), value] : value;
  }
  if (dirs.length !== 1) return null;
  return { verb: verb as HostVerb, dir: dirs[0] as string, flags: flags as HostCommandLine["flags"] };
}
