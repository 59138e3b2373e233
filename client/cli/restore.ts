/**
 * `ferry restore <dir> <path> --rev N`: writes the path as it was at rev N
 * (a deleted file too; a directory with its whole tree as of then) into the
 * directory, then pushes it as a new local change. Before writing anything
 * it opens the directory's host: its binding refuses another workspace's
 * history, and its local changes are pushed first, so whatever the restore
 * replaces is in the history too. With a `sync --watch` holding the
 * directory, the files are written and the watcher pushes them.
 */

import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import type { SyncReport } from "../engine/report.ts";
import type { Endpoint } from "../transport/transport.ts";
import type { EndpointFlags } from "./endpoint.ts";
import { CliError, EXIT } from "./errors.ts";
import { resolveDirEndpoint } from "./folder-endpoint.ts";
import { formatBytes } from "./format.ts";
import { clean } from "./log.ts";
import { serverOptions, toJson } from "./server-flags.ts";
import type { CliHost } from "./session.ts";

type RestoreFlags = EndpointFlags & { json?: boolean; quiet?: boolean; rev: string; push: boolean };

export function registerRestore(program: Command, setExit: (code: number) => void): void {
  serverOptions(
    program
      .command("restore")
      .description("bring a path back as it was at a rev (see ferry log), as a new local change, and push it")
      .argument("<dir>", "the synced directory")
      .argument("<path>", "a path in the workspace, relative to <dir>"),
  )
    .requiredOption("--rev <n>", "the rev to restore from (ferry log lists them)")
    .option("--no-push", "write the files only; the next sync pushes them (local changes are still pushed first)")
    .action(async (dir: string, rawPath: string, flags: RestoreFlags) => {
      const rev = Number(flags.rev);
      if (!Number.isSafeInteger(rev) || rev < 1)
        throw new CliError("usage", `--rev: expected a rev number, got '${flags.rev}'`);
      const path = clean(rawPath);
      const root = realpathSync(resolve(dir));
      // Loaded when the command runs: `ferry --help` and the other commands start without them.
      const { exitFor, printReport } = await import("./print.ts");
      const host = await openUnlessWatched(dir, flags);
      try {
        const endpoint = host?.endpoint ?? (await resolveDirEndpoint(dir, flags));
        const before = host === null ? null : await host.workspace.push();
        const restored = await restorePath(root, endpoint, path, rev);
        const summary = { path, rev, ...restored, pushedBefore: before?.entriesSent ?? 0 };
        const lines = [
          `ferry restore: ${path} as of rev ${rev}: ${restored.paths} path(s), ${formatBytes(restored.bytes)}`,
        ];
        if (summary.pushedBefore > 0)
          lines.unshift(
            `ferry restore: pushed ${summary.pushedBefore} local change(s) first, so they stay in the history`,
          );
        const reports: SyncReport[] = before === null ? [] : [before];
        if (host === null || !flags.push) {
          if (host === null) lines.push(`ferry restore: a running ferry sync holds ${dir} and pushes it`);
          if (flags.json) process.stdout.write(`${toJson({ ...summary, pushed: false })}\n`);
          else if (!flags.quiet) process.stdout.write(`${lines.join("\n")}\n`);
        } else {
          const report = await host.workspace.push();
          reports.push(report);
          if (flags.json) process.stdout.write(`${toJson({ ...summary, pushed: true, report })}\n`);
          else {
            if (!flags.quiet) process.stdout.write(`${lines.join("\n")}\n`);
            printReport(host.out, "pushed", host.endpoint.workspace, report);
          }
        }
        setExit(Math.max(EXIT.ok, ...reports.map(exitFor)));
      } finally {
        await host?.close();
      }
    });
}

/** The directory's host for this command (lock and binding checked), or null when a running `ferry sync` holds it. */
async function openUnlessWatched(dir: string, flags: RestoreFlags): Promise<CliHost | null> {
  const { openCliHost } = await import("./session.ts");
  try {
    return await openCliHost(dir, { ...flags, progress: false }, "push");
  } catch (e) {
    if ((e as { code?: unknown }).code === "store_locked") return null;
    throw e;
  }
}

/** Writes `path` as it was at `rev` into `root`: the snapshot's states, then their verified bytes. */
async function restorePath(root: string, endpoint: Endpoint, path: string, rev: number) {
  const [{ readSnapshot, restoreTree }, { HttpTransport }] = await Promise.all([
    import("../history/restore-tree.ts"),
    import("../transport/http-transport.ts"),
  ]);
  const transport = new HttpTransport(endpoint);
  try {
    const states = await readSnapshot(transport, path, rev);
    if (states.length === 0) throw new CliError("not_found", `${path} did not exist at rev ${rev} (see ferry log)`);
    const restored = await restoreTree(root, transport, states);
    return { paths: restored.written.length, bytes: restored.bytes };
  } finally {
    await transport.close();
  }
}
