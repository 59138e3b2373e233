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
import { registerServe } from "./cli/serve.ts";
import { type HostFlags, openCliHost, printReport } from "./cli/session.ts";
import { watch } from "./cli/watch.ts";
import type { SyncOptions } from "./engine/sync.ts";

function hostCommand(program: Command, name: string, description: string): Command {
  return program
    .command(name)
    .description(description)
    .argument("<dir>", "the directory to sync")
    .option("--url <url>", "server URL (env FERRY_URL, default http://127.0.0.1:8787)")
    .option("-w, --workspace <name>", "workspace name (env FERRY_WORKSPACE)")
    .option("--token <token>", "bearer token (env FERRY_TOKEN; else minted from FERRY_SECRET or the dev secret)")
    .option("--memory", "keep the host store in memory instead of <dir>/.ferry/")
    .option("--ignore <pattern...>", "gitignore-style patterns kept local (added to <dir>/.ferryignore)")
    .option("--json", "print the result as one JSON object")
    .option("--no-progress", "no progress bars")
    .addOption(
      new Option("--transport <kind>", "http, or ws for one WebSocket (the default with sync --watch)").choices([
        "http",
        "ws",
      ]),
    );
}

async function runSync(
  verb: string,
  dir: string,
  flags: HostFlags,
  options: SyncOptions,
  create: boolean,
): Promise<number> {
  const host = await openCliHost(dir, flags, create);
  try {
    const report = await host.engine.sync(options);
    await host.close(); // clears the progress bars before the summary
    return printReport(verb, host.workspace, report, flags.json === true);
  } finally {
    await host.close();
  }
}

export function buildProgram(setExit: (code: number) => void): Command {
  const program = new Command("ferry")
    .description("Keep a directory in sync with a ferry workspace")
    .showHelpAfterError()
    .exitOverride();

  hostCommand(program, "push", "send local changes to the workspace").action(async (dir: string, flags: HostFlags) => {
    setExit(await runSync("pushed", dir, flags, { pull: false }, false));
  });

  hostCommand(program, "pull", "apply the workspace's changes to the directory").action(
    async (dir: string, flags: HostFlags) => {
      setExit(await runSync("pulled", dir, flags, { push: false }, true));
    },
  );

  hostCommand(program, "sync", "pull, then push")
    .option("--watch", "keep running: push local changes as they happen, pull the server's")
    .option(
      "--interval <ms>",
      "with --watch: how often to check the server unasked (default 1000 over http; 30000 over ws, which is poked)",
    )
    .action(async (dir: string, flags: HostFlags & { watch?: boolean; interval?: string }) => {
      if (!flags.watch) {
        setExit(await runSync("synced", dir, flags, {}, true));
        return;
      }
      const transport = flags.transport ?? "ws";
      const host = await openCliHost(dir, { ...flags, transport }, true);
      try {
        const first = await host.engine.sync();
        printReport("synced", host.workspace, first, flags.json === true);
        await watch(host.engine, {
          pollMs: Math.max(100, Number(flags.interval) || (transport === "ws" ? 30_000 : 1000)),
          onReport: (report) => printReport("synced", host.workspace, report, flags.json === true),
          onError: (e) => {
            const d = describeError(e);
            process.stderr.write(`ferry: ${d.code}: ${d.message}\n`);
          },
        });
      } finally {
        await host.close();
      }
    });

  hostCommand(program, "status", "show what a sync would send and receive").action(
    async (dir: string, flags: HostFlags) => {
      const host = await openCliHost(dir, flags, false);
      try {
        const status = await host.engine.status();
        if (flags.json) process.stdout.write(`${JSON.stringify({ workspace: host.workspace, ...status })}\n`);
        else {
          const out = [
            `ferry status: ${status.toPush.length} to push, ${status.toPull.length} to pull (server rev ${status.serverRev})`,
          ];
          if (status.resync) out.push("the server was restored: the next sync compares the whole tree");
          for (const c of status.toPush) out.push(`  push  ${c.kind.padEnd(7)} ${c.path}`);
          for (const c of status.toPull) out.push(`  pull  ${c.kind.padEnd(7)} ${c.path}`);
          process.stdout.write(`${out.join("\n")}\n`);
        }
      } finally {
        await host.close();
      }
    },
  );

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

  registerServe(program, setExit);

  return program;
}

export async function main(argv: readonly string[]): Promise<number> {
  let exit: number = EXIT.ok;
  const program = buildProgram((code) => {
    exit = code;
  });
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

process.exitCode = await main(process.argv);
