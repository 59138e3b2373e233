/**
 * The `ferry` program as commander reads it: every command's definition,
 * help and usage errors. main (cli.ts) loads it for every command line but a
 * plain push, pull, sync or status (host-argv.ts), which starts without it.
 */
import { Command, CommanderError, Option } from "commander";
import { isValidWorkspaceName } from "../../protocol/paths.ts";
import { FERRY_VERSION } from "../version.ts";
import { mintToken, parseTtl } from "./endpoint.ts";
import { CliError, EXIT } from "./errors.ts";
import { registerGc } from "./gc.ts";
import type { HostCommandLine } from "./host-argv.ts";
import { hostOptionsOf } from "./host-options.ts";
import { registerLog } from "./log.ts";
import { registerOpen } from "./open.ts";
import { registerRestore } from "./restore.ts";
import { registerServe } from "./serve.ts";
import type { HostVerb } from "./session.ts";
import { registerWorkspace } from "./workspace.ts";

type SetExit = (code: number) => void;

/** `--ignore a --ignore b`: each flag adds one pattern. */
const collect = (value: string, previous: string[] = []) => [...previous, value];

/** A host verb: its directory, the options of HOST_OPTIONS it takes, and the action they all share. */
function hostCommand(verb: HostVerb, description: string) {
  return (program: Command, setExit: SetExit) => {
    const command = program.command(verb).description(description).argument("<dir>", "the directory to sync");
    for (const o of hostOptionsOf(verb)) {
      if (o.choices) command.addOption(new Option(o.flags, o.description).choices(o.choices));
      else if (o.repeats) command.option(o.flags, o.description, collect);
      else command.option(o.flags, o.description);
    }
    command.action(async (dir: string, flags: HostCommandLine["flags"]) => {
      const { runHostCommand } = await import("./host-commands.ts");
      setExit(await runHostCommand({ verb, dir, flags }));
    });
  };
}

function registerToken(program: Command, setExit: SetExit): void {
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

/** Every command, by name, in the order `ferry --help` lists them. */
const COMMANDS: readonly (readonly [string, (program: Command, setExit: SetExit) => void])[] = [
  ["push", hostCommand("push", "send local changes to the workspace (creates the workspace)")],
  ["pull", hostCommand("pull", "apply the workspace's changes to the directory (made if missing)")],
  ["sync", hostCommand("sync", "pull the workspace's changes, then push local ones (creates the workspace)")],
  ["status", hostCommand("status", "show what a sync would send and receive; changes nothing")],
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
 * names one: defining the ten commands it does not run cost a command a few
 * ms of CPU (BENCHMARKS.md section 14). Help and errors of a named command
 * read the same either way; `ferry --help`, `ferry help <verb>` and a
 * mistyped verb get every command.
 */
export function buildProgram(setExit: SetExit, verb: string | null = null): Command {
  const program = new Command("ferry")
    .description("Keep a directory in sync with a ferry workspace")
    .version(FERRY_VERSION, "-V, --version", "print the version")
    // A usage error is one line and a pointer to the help (runProgram), not the whole help.
    .configureOutput({ outputError: () => {} })
    .exitOverride();
  const only = COMMANDS.some(([name]) => name === verb);
  for (const [name, register] of COMMANDS) if (!only || name === verb) register(program, setExit);
  return program;
}

/** Runs `argv` (as process.argv) through commander; returns the exit status. Other errors propagate to main. */
export async function runProgram(argv: readonly string[]): Promise<number> {
  let exit: number = EXIT.ok;
  const program = buildProgram((code) => {
    exit = code;
  }, argv[2] ?? null);
  try {
    await program.parseAsync([...argv]);
    return exit;
  } catch (e) {
    if (!(e instanceof CommanderError)) throw e;
    // Help and version are not errors; `ferry` alone printed the help (on stderr) to say what it takes.
    if (e.exitCode === 0 || e.code === "commander.help") return e.exitCode === 0 ? EXIT.ok : EXIT.usage;
    throw new CliError(
      "usage",
      `${e.message.replace(/^error: /, "").replace(/\.$/, "")} (see '${helpOf(program, argv)}')`,
    );
  }
}

/** `ferry push --help`, `ferry workspace stats --help`: the help of the command `argv` names, else the program's. */
function helpOf(program: Command, argv: readonly string[]): string {
  const names = ["ferry"];
  let command: Command = program;
  for (const word of argv.slice(2)) {
    const sub = command.commands.find((c) => c.name() === word);
    if (sub === undefined) break;
    names.push(word);
    command = sub;
  }
  return `${names.join(" ")} --help`;
}
