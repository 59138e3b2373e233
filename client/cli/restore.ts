/**
 * `ferry restore <dir> <path> --rev N`: writes the path as it was at rev N
 * (a deleted file too; a directory with its whole tree as of then) into the
 * directory, as a new local change, and pushes it. It runs as any local
 * change does (Workspace.restore, history/restore-at.ts): the directory's
 * own changes are pushed first, so whatever the restore replaces is in the
 * history, and local work still in the way (an edit made since, an ignored
 * file) is moved aside as a conflict copy (exit 3), never destroyed.
 *
 * With a `sync --watch` holding the directory, the command is handed to it
 * (resident-server.ts) and runs as one of its turns, after the sync it was
 * in has pushed what it had; a watch that would not run it leaves the
 * command to meet its lock (store_locked), and nothing is written.
 */

import { existsSync, realpathSync } from "node:fs";
import { resolve } from "node:path";
import { Command } from "commander";
import type { RestoreReport } from "../history/restore-at.ts";
import { findRoot } from "../store/find-root.ts";
import type { EndpointFlags } from "./endpoint.ts";
import { CliError, EXIT } from "./errors.ts";
import { workspacePathOf } from "./folder-endpoint.ts";
import { formatBytes } from "./format.ts";
import { socketPathOf } from "./resident-socket.ts";
import { serverOptions } from "./server-flags.ts";
import type { CliHost } from "./session.ts";

export type RestoreFlags = EndpointFlags & { json?: boolean; rev: string; push: boolean };

/** A restore's command line, as its action gets it. */
export interface RestoreLine {
  readonly dir: string;
  readonly path: string;
  readonly flags: RestoreFlags;
}

/** The restore command on `program`, without its action: registerRestore's, and parseRestoreArgv's. */
export function defineRestore(program: Command): Command {
  return serverOptions(
    program
      .command("restore")
      .description("bring a path back as it was at a rev (see ferry log), as a new local change, and push it")
      .argument("<dir>", "the synced directory")
      .argument("<path>", "a path relative to <dir>, inside the synced folder it is in"),
  )
    .requiredOption("--rev <n>", "the rev to restore from (ferry log lists them)")
    .option("--no-push", "write the files only; the next sync pushes them (local changes are still pushed first)");
}

/**
 * A restore's command line (the arguments after `ferry`) as commander reads
 * it, or null when commander would print help or a usage error instead: for
 * a watch asked to run it (resident-server.ts), which must read it as the
 * command's own process would.
 */
export function parseRestoreArgv(args: readonly string[]): RestoreLine | null {
  let line: RestoreLine | null = null;
  const program = new Command("ferry").exitOverride().configureOutput({ writeOut: () => {}, writeErr: () => {} });
  defineRestore(program).action((dir: string, path: string, flags: RestoreFlags) => {
    line = { dir, path, flags };
  });
  try {
    program.parse(["node", "ferry", ...args]);
  } catch {
    return null;
  }
  return line;
}

export function registerRestore(program: Command, setExit: (code: number) => void): void {
  defineRestore(program).action(async (dir: string, path: string, flags: RestoreFlags) => {
    const line = { dir, path, flags };
    checkRestoreLine(line);
    // The synced folder `dir` is in: restored there, and pushed from there.
    const root = findRoot(dir)?.root ?? realpathSync(resolve(dir));
    let refusal: string | null = null;
    if (existsSync(socketPathOf(root))) {
      const { runServed } = await import("./resident-client.ts");
      const served = await runServed(socketPathOf(root), process.argv, root);
      if ("exit" in served) {
        setExit(served.exit);
        return;
      }
      refusal = served.refused;
    }
    const { openCliHost } = await import("./session.ts");
    let host: CliHost;
    try {
      host = await openCliHost(root, { ...flags, progress: false }, "push");
    } catch (e) {
      // Held by a process that would not run it: refused, nothing written (what it would replace may not be pushed).
      const { code, message } = e as { code?: unknown; message: string };
      if (code === "store_locked" && refusal !== null)
        throw new CliError("store_locked", `${message} (its watch would not run this command: ${refusal})`);
      throw e;
    }
    try {
      setExit(await runRestore(host, line));
    } finally {
      await host.close();
    }
  });
}

/**
 * Throws a usage error for a rev that is not one, or a path that names no
 * path inside the synced folder; the path is relative to `dir`
 * (folder-endpoint.ts workspacePathOf).
 */
function checkRestoreLine({ dir, path, flags }: RestoreLine): { path: string; rev: number } {
  const rev = Number(flags.rev);
  if (!Number.isSafeInteger(rev) || rev < 1)
    throw new CliError("usage", `--rev: expected a rev number, got '${flags.rev}'`);
  const named = workspacePathOf(dir, path);
  if (named === "") throw new CliError("usage", "name a path inside the synced folder to restore");
  return { path: named, rev };
}

/**
 * Runs the restore with an open host, printing into its Output: in this
 * process, or in the watch that holds the directory (resident-server.ts).
 */
export async function runRestore(host: Pick<CliHost, "workspace" | "endpoint" | "out">, line: RestoreLine) {
  const { path, rev } = checkRestoreLine(line);
  // Loaded when the command runs: `ferry --help` and the other commands start without it.
  const { exitFor, printReport } = await import("./print.ts");
  const report = await host.workspace.restore({ path, rev, push: line.flags.push });
  const { out } = host;
  const reports = report.after === null ? [report.before] : [report.before, report.after];
  const exit = Math.max(EXIT.ok, report.kept.length > 0 ? EXIT.incomplete : EXIT.ok, ...reports.map(exitFor));
  if (line.flags.json) {
    out.json(restoreJson(report));
    return exit;
  }
  if (report.before.entriesSent > 0)
    out.info(`ferry restore: pushed ${report.before.entriesSent} local change(s) first, so they stay in the history`);
  for (const k of report.kept)
    out.warn(
      `ferry: conflict: kept the local ${k.path} as ${k.copy} (the server did not hold it; restore replaced it)`,
    );
  out.info(`ferry restore: ${path} as of rev ${rev}: ${report.paths} path(s), ${formatBytes(report.bytes)}`);
  if (report.after !== null) printReport(out, "pushed", host.endpoint.workspace, report.after);
  return exit;
}

/** The --json object: what the restore wrote and kept, and the push after it (as `report`) when it pushed. */
function restoreJson(r: RestoreReport) {
  return {
    path: r.path,
    rev: r.rev,
    paths: r.paths,
    bytes: r.bytes,
    kept: r.kept,
    pushedBefore: r.before.entriesSent,
    pushed: r.after !== null,
    ...(r.after !== null ? { report: r.after } : {}),
  };
}
