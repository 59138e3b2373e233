/**
 * The `ferry` command line: push, pull, sync (with --watch), status, token.
 * Every command that talks to a server takes --url/--workspace/--token (or
 * FERRY_URL/FERRY_WORKSPACE/FERRY_TOKEN), keeps its store in `<dir>/.ferry/`
 * (or --memory), prints one summary line (or --json), and fails with one
 * line `ferry: <code>: <message>` and a non-zero exit.
 */
import { Command, CommanderError, Option } from "commander";
import { isValidWorkspaceName } from "../protocol/paths.ts";
import { mintToken, parseTtl } from "./cli/endpoint.ts";
import { CliError, describeError, EXIT } from "./cli/errors.ts";
import { registerGc } from "./cli/gc.ts";
import { registerLog } from "./cli/log.ts";
import { registerOpen } from "./cli/open.ts";
import { registerRestore } from "./cli/restore.ts";
import { registerServe } from "./cli/serve.ts";
import type { HostFlags, HostVerb } from "./cli/session.ts";
import { registerWorkspace } from "./cli/workspace.ts";
import { FERRY_VERSION } from "./version.ts";

/** `--ignore a --ignore b`: one pattern per flag, so a pattern can never swallow the directory after it. */
const collect = (value: string, previous: string[] = []) => [...previous, value];

function hostCommand(program: Command, name: HostVerb, description: string): Command {
  const command = program
    .command(name)
    .description(description)
    .argument("<dir>", "the directory to sync")
    .option("--url <url>", "server URL (env FERRY_URL, default http://127.0.0.1:8787)")
    .option("-w, --workspace <name>", "workspace name (env FERRY_WORKSPACE)")
    .option("--token <token>", "bearer token (env FERRY_TOKEN; else minted from FERRY_SECRET or the dev secret)")
    .option(
      "--label <name>",
      "this host's name in the workspace's stats and conflict copies (env FERRY_LABEL; default the hostname)",
    )
    .option("--rebind", "sync the directory with this workspace and server although it was synced with another")
    .option("--memory", "keep the host store in memory instead of <dir>/.ferry/ (the directory stays locked)")
    .option(
      "--ignore <pattern>",
      "a gitignore-style pattern kept local for this run (repeat for more; lasting ones go in <dir>/.ferryignore)",
      collect,
    )
    .option("--ignore-vcs", "keep .git, .hg and .svn local (they are synced by default)")
    .option("--json", "print the result as one JSON object")
    .option("-v, --verbose", "list every path sent and received")
    .option("-q, --quiet", "print errors only")
    .option("--no-progress", "no progress lines (they show only when stderr is a terminal)")
    .addOption(
      new Option("--transport <kind>", "http, or ws for one WebSocket (the default with sync --watch)").choices([
        "http",
        "ws",
      ]),
    );
  if (name !== "status") command.option("--dry-run", "show what would be sent and received; change nothing");
  return command;
}

type Register = (program: Command, setExit: (code: number) => void) => void;

/** Every command, by name, in the order `ferry --help` lists them. */
const COMMANDS: readonly (readonly [string, Register])[] = [
  ["push", registerPush],
  ["pull", registerPull],
  ["sync", registerSync],
  ["status", registerStatus],
  ["token", registerToken],
  ["serve", registerServe],
  ["log", registerLog],
  ["restore", registerRestore],
  ["gc", registerGc],
  ["workspace", registerWorkspace],
  ["open", registerOpen],
];

/**
 * The program with every command, or with only `verb` when the command line
 * names one (main): a push, pull or sync is a short process, and defining
 * the ten commands it does not run cost it a few ms of CPU (BENCHMARKS.md
 * section 14). Help and errors of a named command read the same either way;
 * `ferry --help`, `ferry help <verb>` and a mistyped verb get every command.
 */
export function buildProgram(setExit: (code: number) => void, verb: string | null = null): Command {
  const program = new Command("ferry")
    .description("Keep a directory in sync with a ferry workspace")
    .version(FERRY_VERSION, "-V, --version", "print the version")
    .showHelpAfterError()
    .exitOverride();
  const only = COMMANDS.find(([name]) => name === verb);
  for (const [name, register] of COMMANDS) if (!only || name === verb) register(program, setExit);
  return program;
}

function registerPush(program: Command, setExit: (code: number) => void): void {
  hostCommand(program, "push", "send local changes to the workspace (creates the workspace)").action(
    async (dir: string, flags: HostFlags) => {
      const { runSync } = await import("./cli/host-commands.ts");
      setExit(await runSync("push", dir, flags));
    },
  );
}

function registerPull(program: Command, setExit: (code: number) => void): void {
  hostCommand(program, "pull", "apply the workspace's changes to the directory (made if missing)")
    .option("--create", "pull a workspace nothing was pushed to yet (else refused: a typo, most likely)")
    .action(async (dir: string, flags: HostFlags) => {
      const { runSync } = await import("./cli/host-commands.ts");
      setExit(await runSync("pull", dir, flags));
    });
}

function registerSync(program: Command, setExit: (code: number) => void): void {
  hostCommand(program, "sync", "pull the workspace's changes, then push local ones (creates the workspace)")
    .option("--watch", "keep running: push local changes as they happen, pull the server's")
    .option(
      "--interval <ms>",
      "with --watch: how often to check the server unasked (default 1000 over http; 30000 over ws, which is poked)",
    )
    .action(async (dir: string, flags: HostFlags & { watch?: boolean; interval?: string }) => {
      const { runSync, runWatch } = await import("./cli/host-commands.ts");
      setExit(await (!flags.watch || flags.dryRun ? runSync("sync", dir, flags) : runWatch(dir, flags)));
    });
}

function registerStatus(program: Command, setExit: (code: number) => void): void {
  hostCommand(program, "status", "show what a sync would send and receive; changes nothing").action(
    async (dir: string, flags: HostFlags) => {
      const { runStatus } = await import("./cli/host-commands.ts");
      setExit(await runStatus(dir, flags));
    },
  );
}

function registerToken(program: Command, setExit: (code: number) => void): void {
  program
    .command("token")
    .description("mint a token (signed with FERRY_SECRET, or the development secret)")
    .argument("<workspace>", "workspace name, or a prefix ending in *")
    .option("--read-only", "a token that can only read")
    .option("--ttl <duration>", "lifetime: seconds, or with s/m/h/d", "30d")
    .option("--json", "print {token, ws, rights, exp} as JSON")
    .action((scope: string, flags: { readOnly?: boolean; ttl: string; json?: boolean }) => {
      const bare = scope.endsWith("*") ? scope.slice(0, -1) : scope;
      if (bare !== "" && !isValidWorkspaceName(bare))
        throw new CliError("invalid_workspace", `'${scope}' is not a workspace name or prefix`);
      const ttl = parseTtl(flags.ttl);
      const rights = flags.readOnly ? "r" : "rw";
      const token = mintToken(scope, rights, ttl);
      if (flags.json) {
        const exp = Math.floor(Date.now() / 1000) + ttl;
        process.stdout.write(`${JSON.stringify({ token, ws: scope, rights, exp })}\n`);
      } else process.stdout.write(`${token}\n`);
      setExit(EXIT.ok);
    });
}

export async function main(argv: readonly string[]): Promise<number> {
  // `ferry status | head -1`: the reader went away; end quietly instead of with a stack trace.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (e: NodeJS.ErrnoException) => {
      if (e.code === "EPIPE") process.exit(process.exitCode ?? EXIT.ok);
      throw e;
    });
  }
  let exit: number = EXIT.ok;
  const program = buildProgram((code) => {
    exit = code;
  }, argv[2] ?? null);
  const json = argv.includes("--json");
  try {
    await program.parseAsync([...argv]);
    return exit;
  } catch (e) {
    if (e instanceof CommanderError) {
      // Help and version are not errors; commander already printed the usage problem.
      return e.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    const d = describeError(e);
    if (json) process.stdout.write(`${JSON.stringify({ error: { code: d.code, message: d.message } })}\n`);
    process.stderr.write(`ferry: ${d.code}: ${d.message}\n`);
    return d.exit;
  }
}

// Not a top-level await: the CLI bundle is CommonJS (scripts/build-client.mjs).
main(process.argv).then((code) => {
  process.exitCode = code;
});
