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

export const HOST_OPTIONS: readonly HostOption[] = [
  { flags: "--url <url>", description: "server URL (env FERRY_URL, default http://127.0.0.1:8787)" },
  { flags: "-w, --workspace <name>", description: "workspace name (env FERRY_WORKSPACE)" },
  {
    flags: "--token <token>",
    description: "bearer token (env FERRY_TOKEN; else minted from FERRY_SECRET or the dev secret)",
  },
  {
    flags: "--label <name>",
    description:
      "this host's name in the workspace's stats and conflict copies (env FERRY_LABEL; default the hostname)",
  },
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
  { flags: "--json", description: "print the result as one JSON object" },
  { flags: "-v, --verbose", description: "list every path sent and received" },
  { flags: "-q, --quiet", description: "print errors only" },
  { flags: "--no-progress", description: "no progress lines (they show only when stderr is a terminal)" },
  {
    flags: "--transport <kind>",
    description: "http, or ws for one WebSocket (the default with sync --watch)",
    choices: ["http", "ws"],
  },
  {
    flags: "--dry-run",
    description: "show what would be sent and received; change nothing",
    verbs: ["push", "pull", "sync"],
  },
  {
    flags: "--create",
    description: "pull a workspace nothing was pushed to yet (else refused: a typo, most likely)",
    verbs: ["pull"],
  },
  {
    flags: "--watch",
    description: "keep running: push local changes as they happen, pull the server's",
    verbs: ["sync"],
  },
  {
    flags: "--interval <ms>",
    description:
      "with --watch: how often to check the server unasked (default 1000 over http; 30000 over ws, which is poked)",
    verbs: ["sync"],
  },
  {
    flags: "--settle <ms>",
    description:
      "with --watch: how long a file that was being written must be left alone before it is sent (default 2000; 0: at once)",
    verbs: ["sync"],
  },
];

/** The options `verb` takes. */
export function hostOptionsOf(verb: HostVerb): HostOption[] {
  return HOST_OPTIONS.filter((o) => o.verbs === undefined || o.verbs.includes(verb));
}
