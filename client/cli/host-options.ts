/**
 * The options of push, pull, sync and status, in the order their help lists
 * them: program.ts defines them to commander, host-argv.ts reads a plain
 * command line with them without loading commander. One table, so the two
 * cannot drift apart (test/node/host-argv.test.ts holds them equal).
 */
import type { HostVerb } from "./session.ts";

export interface HostOption {
  /** As commander takes them: `-w, --workspace <name>`, `--json`, `--no-progress`. */
  readonly flags: string;
  readonly description: string;
  /** Only these verbs take it; every host verb when absent. */
  readonly verbs?: readonly HostVerb[];
  /** The only values it accepts. */
  readonly choices?: readonly string[];
  /** Given again, it adds a value (`--ignore a --ignore b`: one pattern per flag, so a pattern never swallows the directory after it). */
  readonly repeats?: true;
}

/**
 * The options every command that talks to a server takes, with the same
 * meaning everywhere (issue 29): where the server is, which workspace, how
 * to authenticate, as which host, and how much to print. Resolved in one
 * place (folder-endpoint.ts); printed through one Output (output.ts).
 */
export const COMMON_OPTIONS = {
  url: { flags: "--url <url>", description: "server URL (env FERRY_URL, default http://127.0.0.1:8787)" },
  workspace: { flags: "-w, --workspace <name>", description: "workspace name (env FERRY_WORKSPACE)" },
  token: {
    flags: "--token <token>",
    description: "bearer token (env FERRY_TOKEN; else minted from FERRY_SECRET or the dev secret)",
  },
  label: {
    flags: "--label <name>",
    description:
      "this host's name in the workspace's stats and conflict copies (remembered by the directory; first env FERRY_LABEL, else the hostname)",
  },
  json: { flags: "--json", description: "print the result as one JSON object" },
  verbose: { flags: "-v, --verbose", description: "say more: every path sent and received" },
  quiet: {
    flags: "-q, --quiet",
    description: "no progress or summary; errors and what needs you (a conflict copy, a path skipped) still print",
  },
} as const satisfies Record<string, HostOption>;

/** COMMON_OPTIONS in the order every command's help lists them. */
export const COMMON_OPTION_LIST: readonly HostOption[] = Object.values(COMMON_OPTIONS);

export const HOST_OPTIONS: readonly HostOption[] = [
  COMMON_OPTIONS.url,
  COMMON_OPTIONS.workspace,
  COMMON_OPTIONS.token,
  COMMON_OPTIONS.label,
  COMMON_OPTIONS.json,
  COMMON_OPTIONS.verbose,
  COMMON_OPTIONS.quiet,
  {
    flags: "--rebind",
    description: "sync the directory with this workspace and server although it was synced with another",
  },
  {
    flags: "--memory",
    description: "keep the host store in memory instead of <dir>/.ferry/ (the directory stays locked)",
  },
  {
    flags: "--ignore <pattern>",
    description:
      "a gitignore-style pattern kept local for this run (repeat for more; lasting ones go in <dir>/.ferryignore)",
    repeats: true,
  },
  { flags: "--ignore-vcs", description: "keep .git, .hg and .svn local (they are synced by default)" },
  { flags: "--no-progress", description: "no progress lines (they show only when stderr is a terminal)" },
  {
    flags: "--transport <kind>",
    description: "http, or ws for one WebSocket (the default with --watch)",
    choices: ["http", "ws"],
  },
  {
    flags: "--dry-run",
    description: "show what would be sent and received; change nothing",
    verbs: ["push", "pull", "sync"],
  },
  {
    flags: "--allow-mass-delete",
    description:
      "push even a deletion of most of the tree (more than half of 1,000+ paths, or all of 10+; env FERRY_MASS_DELETE sets the rule)",
    verbs: ["push", "sync"],
  },
  {
    flags: "--heal",
    description:
      "after the push, upload again what the server lost of this directory's files (found by 'ferry workspace check')",
    verbs: ["push"],
  },
  {
    flags: "--create",
    description: "pull a workspace nothing was pushed to yet (else refused: a typo, most likely)",
    verbs: ["pull"],
  },
  {
    flags: "--recreate",
    description:
      "the workspace was deleted since this directory synced it: start it again (push: this tree; pull: from empty)",
    verbs: ["push", "pull", "sync"],
  },
  {
    flags: "--watch",
    description: "keep running: push local changes as they happen, pull the server's (pull: only pull)",
    verbs: ["sync", "pull"],
  },
  {
    flags: "--interval <ms>",
    description:
      "with --watch: how often to check the server unasked (default 1000 over http; 30000 over ws, which is poked)",
    verbs: ["sync", "pull"],
  },
  {
    flags: "--settle <ms>",
    description:
      "with --watch: how long a file that was being written must be left alone before it is sent (default 2000; 0: at once)",
    verbs: ["sync", "pull"],
  },
];

/** The options `verb` takes. */
export function hostOptionsOf(verb: HostVerb): HostOption[] {
  return HOST_OPTIONS.filter((o) => o.verbs === undefined || o.verbs.includes(verb));
}
